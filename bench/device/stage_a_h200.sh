#!/usr/bin/env bash
# Issue 32, session 13, one H200: `mma16` (2-8 rows, `a` from global memory)
# and `mma16_staged` (9-16 rows, `a` staged), build target/sa
# (bench/device/stage_a_build.sh):
#   1. the MLP block at five widths against torch's f32 reference at every
#      dispatch edge, forced generated, and measured;
#   2. A/B at 4096/7168 against one `mma16` for 2-16 rows (`single16`, the
#      build before), with and without the pair's RMSNorm, kernels per call
#      in a CUDA graph, two rounds;
#   3. compute-sanitizer memcheck and racecheck on the mma kernels;
#   4. the C++ apps (world 1, TP 2 on one GPU) and symm-gpu-tests at TP 2.
#   (device) tar -xJf target/sa.tar.xz -C target && bash bench/device/stage_a_h200.sh
set -uo pipefail
B=target/sa
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20 ALL_PARTS="checks ab sanitizer apps"
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
part checks && five_width_checks 2>&1 | tee "$OUT/checks.log"
part ab && variant_rounds "single16 mlp_4096x7168 nonorm_single16 nonorm" 2,9,16 2,8,9,16 2>&1 | tee "$OUT/ab.log"
part sanitizer && sanitize_layers symm_matmul 2,9,16 2>&1 | tee "$OUT/sanitizer.log"
part apps && {
  llama_apps
  run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/apps.log"
