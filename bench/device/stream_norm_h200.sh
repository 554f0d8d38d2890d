#!/usr/bin/env bash
# Issue 32, session 13, one H200: the pair's tensor-core GEMV with its
# RMSNorm applied as it reads `a` (stream-norm), build target/sn
# (bench/device/stream_norm_build.sh):
#   1. the MLP block at five widths against torch's f32 reference at every
#      dispatch edge, forced generated, and measured;
#   2. A/B at 4096/7168: staged (the build before), streamed, and nonorm
#      (no RMSNorm: the bound), kernels per call in a CUDA graph, 2 rounds;
#   3. compute-sanitizer memcheck and racecheck on mma16;
#   4. the C++ apps (world 1, TP 2 on one GPU) and symm-gpu-tests at TP 2.
#   (device) tar -xJf target/sn.tar.xz -C target && bash bench/device/stream_norm_h200.sh
set -uo pipefail
B=target/sn
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20 ALL_PARTS="checks ab sanitizer apps"
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
part checks && five_width_checks 2>&1 | tee "$OUT/checks.log"
part ab && variant_rounds "staged streamed nonorm" 2,16 2,8,16 2>&1 | tee "$OUT/ab.log"
part sanitizer && sanitize_layers mma16 2,16 2>&1 | tee "$OUT/sanitizer.log"
part apps && {
  llama_apps
  run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/apps.log"
