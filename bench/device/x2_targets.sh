#!/usr/bin/env bash
# Issue 32, session 44, prepared for 2x H200 (not run: x2 was lent only
# after this session's device time was spent): issue 32's two-GPU targets
# at HEAD, and the wgmma rings' 8-row kernels against the same build
# without them (`no8`), both in the same processes beside torch's variants
# and torch.compile (Inductor) + CUDA graphs, 3 weight copies, TP 2, at 1,
# 2, 8, 16, 128 and 2048 tokens; the floor first. On one H200 at world size
# 1 the 8-row kernels made the decoder half-layers 0.35-0.8 µs faster at
# 2-8 rows and the MLP block 0.5 µs faster at 2
# (bench/results/2026-11-29-eight-row-wgmma-h200.md). Keep them unless
# `symm_no8` beats `symm` here at 2-8 tokens.
#   (here)   bench/device/eight_rows_x2_build.sh target/x8
#   (device) bash bench/device/eight_rows_x2.sh target/x8   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: eight_rows_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export LAYER_TOKENS=${LAYER_TOKENS:-1,2,8,16,128,2048} LAYER_WEIGHT_COPIES=3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SYMM_LOG=info layers_beside_x2 "$NEW" no8
