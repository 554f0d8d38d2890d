#!/usr/bin/env bash
# Issue 32, session 6: our layers enqueued with the runtime's per-call
# CUDA graphs (SYMM_CUDA_GRAPHS=1, the default) against direct launches
# (SYMM_CUDA_GRAPHS=0: the kernels launched one by one, programmatic
# launches between them), on 2 GPUs, beside the same torch anchors.
#
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/x2d/layers (and llama_decoder)
#   (device) bash bench/device/graphs_ab_x2.sh target/x2d   (kind nvidia-h200-x2)
set -uo pipefail
B=${1:?usage: graphs_ab_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,16}
for graphs in 1 0; do
  SYMM_CUDA_GRAPHS=$graphs run timeout 300 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$B/layers/libllama_mlp.so" 2>&1 | tee "$OUT/layer_bench_graphs$graphs.log"
  SYMM_CUDA_GRAPHS=$graphs run timeout 300 torchrun --nproc_per_node=2 bench/model/decoder_bench.py \
    "$B/layers/libllama_decoder.so" 2>&1 | tee "$OUT/decoder_bench_graphs$graphs.log"
done
