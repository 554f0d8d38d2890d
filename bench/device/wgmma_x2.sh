#!/usr/bin/env bash
# Issue 32, session 16, on 2 GPUs in one device call: the floor, then the
# MLP block and the decoder half-layer at TP 2 beside torch's variants and
# torch.compile (Inductor) + CUDA graphs (LAYER_TOKENS, default 1, 16, 64,
# 128), two rounds. The layers are built for --chip sm_90a
# --matmul-wgmma-gemv, so the single matmuls (the down projection, o_proj)
# take the wgmma GEMV for calls of 17-128 rows where it measures faster than
# cuBLAS; each bench also times the same compiler without it (`nowg`, the
# default) in the same process.
#   (here)   for l in llama_mlp llama_decoder; do
#              SYMM_COMPILE_FLAGS="--chip sm_90a --matmul-wgmma-gemv" \
#                python/build_layer.sh examples/$l.mlir target/wx/layers
#              LAYER_NAME=${l}_nowg SYMM_COMPILE_FLAGS="--chip sm_90a" \
#                python/build_layer.sh examples/$l.mlir target/wx/layers
#            done
#   (device) bash bench/device/wgmma_x2.sh target/wx   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: wgmma_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export LAYER_TOKENS=${LAYER_TOKENS:-1,16,64,128}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SYMM_LOG=info layers_beside_x2 "$NEW" nowg
