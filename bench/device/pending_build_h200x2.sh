#!/usr/bin/env bash
# Builds what pending_h200x2.sh runs into DIR, in one step: the Llama apps
# (llama_mlp, llama_attn_out, llama_decoder; row_ops, symm-launch,
# symm-gpu-tests), the Python layers (llama_mlp and llama_decoder, each
# also without the split-K prologue: label nosplit), the compiled all-reduce
# benchmark (bench/compiled/allreduce_bench.cpp, which also times the
# runtime's library all-reduce) and torch's anchors. The session-13 layer
# before the vector row reductions (label before) is not rebuilt: build it
# into DIR/py by hand (pending_h200x2.sh's header) to include it.
#
#   bench/device/pending_build_h200x2.sh target/lN
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: pending_build_h200x2.sh DIR}
release=target/release
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
bench/model/build_apps.sh "$out"
# What pending_h200x2.sh does not run.
rm -f "$out"/{llama_mlp_bad_ptx,llama_mlp_rust,partitioned,tp_mlp,tp_mlp_m128,tp_mlp_w4,math_accuracy}
for layer in llama_mlp llama_decoder; do
  python/build_layer.sh examples/$layer.mlir "$out/py"
  LAYER_NAME=${layer}_nosplit SYMM_COMPILE_FLAGS=--split-k-max-rows=0 \
    python/build_layer.sh examples/$layer.mlir "$out/py"
done
mkdir -p "$out/src/ar"
python3 bench/compiled/gen_allreduce.py > "$out/src/ar/allreduce.mlir"
$release/symm-compile "$out/src/ar/allreduce.mlir" -o "$out/src/ar/ar.o"
c++ -O2 -std=c++17 -DALGORITHM=auto -I runtime/include -I "$out/src/ar" \
  bench/compiled/allreduce_bench.cpp "$out/src/ar/ar.o" $release/libsymm_runtime.a \
  -lpthread -ldl -lm -o "$out/compiled_ar"
strip "$out/compiled_ar"
rm -rf "$out/src"
mkdir -p "$out/anchors" && cp ../shared/anchors/*.py "$out/anchors/"
echo "built into $out ($(du -sh "$out" | cut -f1)): $(ls "$out" | tr '\n' ' ')"
