#!/usr/bin/env bash
# Issue 32, session 9, one H200: the pair's RMSNorm with its row factor
# applied to the sums (`row-scale`, the default: the tensor-core GEMV
# stages bf16(x · w) in the statistic's pass) against the whole norm before
# the loop (libmlp_whole.so: --no-matmul-row-scale), forced generated,
# kernels per call in a CUDA graph, alternating, two rounds; then the four
# widths' checks against torch's f32 reference at the dispatch edges
# (forced generated and measured), compute-sanitizer on `mma16`, and the
# C++ apps at world 1 and at TP 2 on one GPU. target/rs.tar.xz comes from
# `bench/device/matmul_build.sh target/rs` plus the whole-norm layer (see
# bench/results/2026-11-26-row-scale-h200.md).
#   (device) bash bench/device/row_scale_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
rm -rf target/rs && tar -xJf target/rs.tar.xz -C target
B=target/rs
export SYMM_TIMEOUT_S=20
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [[ ${PARTS:-ab checks sanitizer apps} == *ab* ]]; then
  ab_rounds "mlp_4096x7168 mlp_whole" "${PROFILE:-2,8,16}" 2>&1 | tee "$OUT/ab.log"
fi
if [[ ${PARTS:-ab checks sanitizer apps} == *checks* ]]; then
  widths_checks 2>&1 | tee "$OUT/checks.log"
fi
if [[ ${PARTS:-ab checks sanitizer apps} == *sanitizer* ]]; then
  sanitize_layers "${SANITIZE_KERNELS:-mma16}" "${SANITIZE_TOKENS:-2,16}" 2>&1 | tee "$OUT/sanitizer.log"
fi
if [[ ${PARTS:-ab checks sanitizer apps} == *apps* ]]; then
  llama_apps 2>&1 | tee "$OUT/apps.log"
fi
