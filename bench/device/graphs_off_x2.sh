#!/usr/bin/env bash
# Issue 32, session 17, on 2 GPUs in one device call: whether a compiled
# block's own CUDA graph (one per call and token count) costs the enqueued
# call at decode sizes. The MLP block and the decoder half-layer of build
# $1 at TP 2 (LAYER_TOKENS, default 1, 16, 128), each bench run with the
# runtime's graphs (the default) and with SYMM_CUDA_GRAPHS=0 (the kernels
# launched straight onto the stream, programmatic launch between them),
# alternating, two rounds; torch.compile (Inductor) + CUDA graphs in each.
#   (device) bash bench/device/graphs_off_x2.sh target/lx   (kind nvidia-h200-x2)
set -uo pipefail
B=${1:?usage: graphs_off_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=$B/layers
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,16,128}
for round in 1 2; do
  for graphs in 1 0; do
    SYMM_CUDA_GRAPHS=$graphs run timeout 250 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
      "$L/libllama_mlp.so" 2>&1 | tee "$OUT/layer_graphs${graphs}_$round.log"
    SYMM_CUDA_GRAPHS=$graphs run timeout 250 torchrun --nproc_per_node=2 bench/model/decoder_bench.py \
      "$L/libllama_decoder.so" 2>&1 | tee "$OUT/decoder_graphs${graphs}_$round.log"
  done
done
