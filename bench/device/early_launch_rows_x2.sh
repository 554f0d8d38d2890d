#!/usr/bin/env bash
# Issue 32, session 15, on 2 GPUs in one device call: the floor, then the
# MLP block and the decoder half-layer at TP 2 beside torch's variants and
# torch.compile (Inductor) + CUDA graphs (LAYER_TOKENS, default 1, 4, 16,
# 128), two rounds. The layers are built with launch-dependents-rows=1 (the
# rows kernels let the next grid launch as they start for one-row calls,
# and the one-row pair behind them prefetches its weight meanwhile); each
# bench also times the build before (`base`, ebb73f3's compiler) in the
# same process.
#   (here)   for l in llama_mlp llama_decoder; do
#              python/build_layer.sh examples/$l.mlir target/el/layers     # this compiler
#              LAYER_NAME=${l}_base python/build_layer.sh ...              # ebb73f3's compiler
#            done
#   (device) bash bench/device/early_launch_rows_x2.sh target/el   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: early_launch_rows_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export LAYER_TOKENS=${LAYER_TOKENS:-1,4,16,128}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
layers_beside_x2 "$NEW" base
