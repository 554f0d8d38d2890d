#!/usr/bin/env bash
# Issue 32, session 42, prepared for 2x H200 (not run: x2 not lent): the
# after-GEMV wgmma ring (`wgmma-gemv-after-gemv`, on for --chip sm_90a since
# this session) against the same build without it (`noring`), both in the
# same processes beside torch's variants and torch.compile (Inductor) +
# CUDA graphs, 3 weight copies, TP 2. On one H200 at world size 1 the ring
# made the MLP block 0.2-0.7 µs faster at 8-16 rows and the decoder
# half-layer 0.3-0.7 µs (bench/results/2026-11-29-ring-before-wait-h200.md);
# at TP 2 its slices feed the all-reduce as mma16_staged's do. Keep it on
# unless `symm_noring` beats `symm` here at 2-16 tokens.
#   (here)   cargo build --release -p symm-compile -p symm-runtime-clib
#            for l in llama_mlp llama_decoder; do
#              SYMM_COMPILE_FLAGS="--chip sm_90a" python/build_layer.sh examples/$l.mlir target/rx/layers
#              LAYER_NAME=${l}_noring SYMM_COMPILE_FLAGS="--chip sm_90a --no-matmul-wgmma-gemv-after-gemv" \
#                python/build_layer.sh examples/$l.mlir target/rx/layers
#            done
#   (device) bash bench/device/ring_before_wait_x2.sh target/rx   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: ring_before_wait_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export LAYER_TOKENS=${LAYER_TOKENS:-1,2,9,16,128} LAYER_WEIGHT_COPIES=3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SYMM_LOG=info layers_beside_x2 "$NEW" noring
