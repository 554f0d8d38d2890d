#!/usr/bin/env bash
# Issue 32, session 13, on 2 GPUs in one device call: the floor
# (bench/floor/stream_read.cu), then the MLP block and the decoder
# half-layer at TP 2 beside torch's variants and torch.compile (Inductor) +
# CUDA graphs at 1, 16, 128 and 2048 tokens (LAYER_TOKENS), two rounds;
# each bench also times the build before this session's `mma16_staged`
# (`single16`: --no-matmul-mma-stage-a) in the same process.
#   (here)   for l in llama_mlp llama_decoder; do
#              python/build_layer.sh examples/$l.mlir target/x2s/layers
#              LAYER_NAME=${l}_single16 SYMM_COMPILE_FLAGS=--no-matmul-mma-stage-a \
#                python/build_layer.sh examples/$l.mlir target/x2s/layers; done
#   (device) bash bench/device/stage_a_x2.sh target/x2s   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: stage_a_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
layers_beside_x2 "$NEW" single16
