#!/usr/bin/env bash
# Issue 32, session 14, on 2 GPUs in one device call: the floor
# (bench/floor/stream_read.cu), then the MLP block and the decoder
# half-layer at TP 2 beside torch's variants and torch.compile (Inductor) +
# CUDA graphs at 1, 16, 128 and 2048 tokens (LAYER_TOKENS), two rounds;
# the layers are built with the down projection's GEMVs sending its split-K
# slices (--matmul-lamport-send), and each bench also times the default
# build, where the all-reduce sends them (`nosend`), in the same process.
# (Run on 2026-11-27 as the first design, where that was the default and
# --no-matmul-lamport-send built `nosend`.)
#   (here)   for l in llama_mlp llama_decoder; do
#              SYMM_COMPILE_FLAGS=--matmul-lamport-send python/build_layer.sh examples/$l.mlir target/x2l/layers
#              LAYER_NAME=${l}_nosend python/build_layer.sh examples/$l.mlir target/x2l/layers; done
#   (device) bash bench/device/lamport_send_x2.sh target/x2l   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: lamport_send_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
layers_beside_x2 "$NEW" nosend
