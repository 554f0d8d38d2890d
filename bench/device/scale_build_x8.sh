#!/usr/bin/env bash
# Builds what scale_h200x8.sh (issue 18) runs into DIR: the runtime's GPU
# tests and benchmarks, the launcher, the compiled all-reduce benchmark for
# 8 ranks, the Llama MLP block compiled for 8 ranks (F / 8 = 1792 columns of
# gate and up per rank) as a Python layer, and the torch anchors.
#
#   bench/device/scale_build_x8.sh target/x8
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scale_build_x8.sh DIR}
release=target/release
cargo build -q --release -p symm-compile -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher
mkdir -p "$out/src" "$out/py" "$out/anchors"
cp $release/{symm-launch,symm-gpu-tests,symm-allreduce-bench,symm-agmm-bench} "$out/"
python3 bench/compiled/gen_allreduce.py 8 > "$out/src/allreduce_w8.mlir"
$release/symm-compile "$out/src/allreduce_w8.mlir" -o "$out/src/ar.o" # ar.h: the header the benchmark includes
c++ -O2 -std=c++17 -DALGORITHM=auto -I runtime/include -I "$out/src" \
  bench/compiled/allreduce_bench.cpp "$out/src/ar.o" $release/libsymm_runtime.a \
  -lpthread -ldl -lm -o "$out/compiled_ar_w8"
strip "$out/compiled_ar_w8" "$out"/symm-*
# The MLP block at tensor-parallel 8: each rank holds F / 8 columns of the
# gate and up projections and as many rows of the down projection.
sed -e 's/world_size(2)/world_size(8)/' -e 's/7168/1792/g' examples/llama_mlp.mlir \
  > "$out/src/llama_mlp_w8.mlir"
grep -q 'world_size(8)' "$out/src/llama_mlp_w8.mlir"
LAYER_NAME=llama_mlp_w8 python/build_layer.sh "$out/src/llama_mlp_w8.mlir" "$out/py"
cp ../shared/anchors/*.py "$out/anchors/"
rm -f "$out/src/"*.o
echo "built into $out ($(du -sh "$out" | cut -f1)): $(ls "$out" | tr '\n' ' ')"
