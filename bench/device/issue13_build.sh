#!/usr/bin/env bash
# Builds what issue13_h200x2.sh runs into DIR: the Llama apps and the rest
# of bench/model/build_apps.sh, the hand-written kernel example, a large
# tp_mlp (push two-shot kernels), and the compiled all-reduce benchmark
# twice: with this tree's compiler and with BEFORE's (a release build of
# the commit before the kernels became device-op IR), for a before/after
# in one device call; plus the runtime's all-reduce benchmark.
#
#   bench/device/issue13_build.sh target/issue13 /tmp/before/target/release
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: issue13_build.sh DIR BEFORE_RELEASE_DIR}
before=${2:?usage: issue13_build.sh DIR BEFORE_RELEASE_DIR}
bench/model/build_apps.sh "$out"
release=target/release
mkdir -p "$out/src/custom" "$out/src/large" "$out/src/ar" "$out/src/ar_before"
link() { # object app binary runtime-dir [flags...]
  local object=$1 app=$2 binary=$3 runtime=$4
  shift 4
  c++ -O2 -std=c++17 "$@" -I runtime/include -I examples/cpp -I "$(dirname "$object")" "$app" \
    "$object" "$runtime/libsymm_runtime.a" -lpthread -ldl -lm -o "$binary"
  strip "$binary"
}
$release/symm-compile examples/custom_kernel/reduce_scatter.mlir -o "$out/src/custom/reduce_scatter.o"
link "$out/src/custom/reduce_scatter.o" examples/custom_kernel/reduce_scatter.cpp "$out/reduce_scatter" $release
sed -e 's/512/1024/g' -e 's/256/512/g' -e 's/64x/1024x/g' examples/tp_mlp.mlir > "$out/src/large/tp_mlp.mlir"
$release/symm-compile "$out/src/large/tp_mlp.mlir" -o "$out/src/large/tp_mlp.o"
link "$out/src/large/tp_mlp.o" examples/cpp/tp_mlp.cpp "$out/tp_mlp_large" $release -DTP_M=1024 -DTP_D=512 -DTP_F=2048
python3 bench/compiled/gen_allreduce.py > "$out/src/ar/allreduce.mlir"
cp "$out/src/ar/allreduce.mlir" "$out/src/ar_before/"
$release/symm-compile "$out/src/ar/allreduce.mlir" -o "$out/src/ar/ar.o"
link "$out/src/ar/ar.o" bench/compiled/allreduce_bench.cpp "$out/compiled_ar" $release -DALGORITHM=ir
$before/symm-compile "$out/src/ar_before/allreduce.mlir" -o "$out/src/ar_before/ar.o"
link "$out/src/ar_before/ar.o" bench/compiled/allreduce_bench.cpp "$out/compiled_ar_before" $before -DALGORITHM=text
cargo build -q --release -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher --bin symm-allreduce-bench
cp $release/symm-allreduce-bench "$out/"
rm -rf "$out/src/"*/*.o
mkdir -p "$out/anchors" && cp ../shared/anchors/*.py "$out/anchors/"
echo "built into $out: $(ls "$out" | tr '\n' ' ')"
