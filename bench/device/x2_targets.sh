#!/usr/bin/env bash
# Issue 32, prepared for 2x H200 (sessions 44-45; not run: x2 was not lent
# while device time was left): issue 32's two-GPU targets at HEAD, and
# HEAD against x2_targets_build.sh's VARIANT (nocl: no wgmma clusters),
# both in the same processes beside torch's variants and torch.compile
# (Inductor) + CUDA graphs, 3 weight copies, TP 2, at 1, 2, 8, 16, 128
# and 2048 tokens; the floor first. On one H200 at world size 1 the
# after-GEMV ring's clusters made the MLP block 0.35-0.8 µs faster at
# 2-16 rows and the decoder at TP 2's widths 0.2-0.65
# (bench/results/2026-11-29-cluster-multicast-h200.md). Keep them unless
# `symm_nocl` beats `symm` here.
#   (here)   bench/device/x2_targets_build.sh target/x8
#   (device) bash bench/device/x2_targets.sh target/x8   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: x2_targets.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export LAYER_TOKENS=${LAYER_TOKENS:-1,2,8,16,128,2048} LAYER_WEIGHT_COPIES=3
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
SYMM_LOG=info layers_beside_x2 "$NEW" "${VARIANT:-nocl}"
