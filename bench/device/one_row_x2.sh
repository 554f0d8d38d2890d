#!/usr/bin/env bash
# Issue 32, session 41, prepared for 2x H200 (not run: x2 not lent): the
# decoder's pair without a prologue taking one-row calls on its staged
# tensor-core GEMV (bench/device/one_row_rule.patch, `or`) against HEAD,
# both in the same processes beside torch's variants and torch.compile
# (Inductor) + CUDA graphs, 3 weight copies. On one H200 it gained 0.3-0.8 µs
# at one row (bench/results/2026-11-29-stage-few-h200.md); it drops the
# one-row GEMV's L2 prefetch while the all-reduce before it waits on its
# peers, which x2 measured at 0.8-1 µs. Keep the rule only if `symm_or`
# beats `symm` at 1 token here.
#   (here)   cargo build --release -p symm-compile -p symm-runtime-clib  # HEAD
#            for l in llama_mlp llama_decoder; do
#              SYMM_COMPILE_FLAGS="--chip sm_90a" python/build_layer.sh examples/$l.mlir target/or/layers
#            done
#            git apply bench/device/one_row_rule.patch && cargo build --release -p symm-compile
#            for l in llama_mlp llama_decoder; do
#              LAYER_NAME=${l}_or SYMM_COMPILE_FLAGS="--chip sm_90a" python/build_layer.sh examples/$l.mlir target/or/layers
#            done
#            git checkout passes/src && cargo build --release -p symm-compile
#   (device) bash bench/device/one_row_x2.sh target/or   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: one_row_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export LAYER_TOKENS=${LAYER_TOKENS:-1,2,16} LAYER_WEIGHT_COPIES=3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SYMM_LOG=info layers_beside_x2 "$NEW" or
