#!/usr/bin/env bash
# Builds the Llama layer apps for the device machine into DIR (stripped,
# with symm-launch, symm-gpu-tests and the math accuracy app), linked
# against the release runtime. Also llama_mlp_bad_ptx: the llama_mlp
# object with its embedded PTX retargeted to an architecture that does not
# exist, so loading its kernels fails for real (the planted module failure).
#
#   bench/model/build_apps.sh target/issue12
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: build_apps.sh DIR}
cargo build -q --release -p symm-compile -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher
mkdir -p "$out/src"
compile=target/release/symm-compile
link() { # object app binary [defines...]
  local object=$1 app=$2 binary=$3
  shift 3
  c++ -O2 -std=c++17 "$@" -I runtime/include -I "$(dirname "$object")" "$app" "$object" \
    target/release/libsymm_runtime.a -lpthread -ldl -lm -o "$binary"
  strip "$binary"
}
for layer in llama_mlp llama_attn_out llama_decoder; do
  dir=$out/src/$layer
  mkdir -p "$dir"
  $compile examples/$layer.mlir -o "$dir/$layer.o" --emit=ptx
  link "$dir/$layer.o" examples/cpp/$layer.cpp "$out/$layer"
done
# Two MLP blocks with a host step between them: CUDA-graph partitions.
mkdir -p "$out/src/partitioned"
$compile examples/partitioned.mlir -o "$out/src/partitioned/partitioned.o"
link "$out/src/partitioned/partitioned.o" examples/cpp/partitioned.cpp "$out/partitioned" -I examples/cpp
bad=$out/src/bad_ptx
mkdir -p "$bad"
cp "$out/src/llama_mlp/llama_mlp.h" "$out/src/llama_mlp/llama_mlp.o" "$bad/"
sed -i 's/\.target sm_90/.target sm_99/' "$bad/llama_mlp.o"
grep -q 'target sm_99' "$bad/llama_mlp.o"
link "$bad/llama_mlp.o" examples/cpp/llama_mlp.cpp "$out/llama_mlp_bad_ptx"
# The Rust twin of the llama_mlp app, built by cargo as a user builds it
# (examples/rust: build.rs compiles the layer with symm-build).
cargo build -q --release -p symm-examples --bin llama_mlp
cp target/release/llama_mlp "$out/llama_mlp_rust"
strip "$out/llama_mlp_rust"
# Softmax and LayerNorm rows against a host reference.
mkdir -p "$out/src/row_ops"
$compile bench/compiled/row_ops.mlir -o "$out/src/row_ops/row_ops.o"
link "$out/src/row_ops/row_ops.o" bench/compiled/row_ops.cpp "$out/row_ops" -I examples/cpp
# The earlier example (f32, static shapes) as a regression check.
mkdir -p "$out/src/tp_mlp"
$compile examples/tp_mlp.mlir -o "$out/src/tp_mlp/tp_mlp.o"
link "$out/src/tp_mlp/tp_mlp.o" examples/cpp/tp_mlp.cpp "$out/tp_mlp"
# The same program compiled for another token count (static shapes), to
# run beside tp_mlp: ranks with different shapes must fail, not hang.
mkdir -p "$out/src/tp_mlp_128"
sed -e 's/64x/128x/g' examples/tp_mlp.mlir > "$out/src/tp_mlp_128/tp_mlp.mlir"
$compile "$out/src/tp_mlp_128/tp_mlp.mlir" -o "$out/src/tp_mlp_128/tp_mlp.o"
link "$out/src/tp_mlp_128/tp_mlp.o" examples/cpp/tp_mlp.cpp "$out/tp_mlp_m128" -DTP_M=128 -DTP_D=256 -DTP_F=1024
mkdir -p "$out/src/tp_mlp_w4"
sed -e 's/world_size(2)/world_size(4)/' -e 's/512/256/g' examples/tp_mlp.mlir > "$out/src/tp_mlp_w4/tp_mlp.mlir"
$compile "$out/src/tp_mlp_w4/tp_mlp.mlir" -o "$out/src/tp_mlp_w4/tp_mlp.o"
link "$out/src/tp_mlp_w4/tp_mlp.o" examples/cpp/tp_mlp.cpp "$out/tp_mlp_w4"
$compile bench/compiled/math_accuracy.mlir -o "$out/src/math_accuracy.o"
link "$out/src/math_accuracy.o" bench/compiled/math_accuracy.cpp "$out/math_accuracy" -I examples/cpp
cp target/release/symm-launch target/release/symm-gpu-tests "$out/"
rm -rf "$out/src/"*/*.o "$out/src/"*.o "$out/src/"*/*.a
echo "built into $out: $(ls "$out" | tr '\n' ' ')"
