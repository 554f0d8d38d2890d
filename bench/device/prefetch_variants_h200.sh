#!/usr/bin/env bash
# Issue 32, session 9, one H200: the MLP pair (mma16 with its RMSNorm
# prologue) with more of its weight in flight while the prologue runs:
# `base` as HEAD; `eN` N more 16-row steps prefetched into L2 right after
# the first loads (before the prologue); `mN` the same issued after the
# statistic's pass (its loads of `a` first); `uN` N steps in flight per
# warp instead of 2. Forced generated, kernels per call in a CUDA graph,
# two rounds (target/pf from a scratch build with SYMM_EXP_* variables).
#   (device) bash bench/device/prefetch_variants_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
B=target/pf
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
variant_rounds "${VARIANTS:-base e4 e8 m4 m8 m16 u3 u4}" 2 2,8,16 2>&1 | tee "$OUT/variants.log"
