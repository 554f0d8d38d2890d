#!/usr/bin/env bash
# Issue 32, session 14, one H200: the down projection's GEMVs send its
# split-K slices into the Lamport areas (--matmul-lamport-send), build
# target/ls (bench/device/lamport_send_build.sh):
#   1. the MLP block at five widths against torch's f32 reference at every
#      dispatch edge, forced generated, and measured;
#   2. A/B at 4096/7168 against the all-reduce sending the slices
#      (`nosend`, the default build), kernels per call in a CUDA graph, two
#      rounds;
#   3. compute-sanitizer memcheck and racecheck on the matmul and
#      all-reduce kernels;
#   4. the C++ apps (world 1, TP 2 on one GPU) and symm-gpu-tests at TP 2.
#   (device) tar -xJf target/ls.tar.xz -C target && bash bench/device/lamport_send_h200.sh
set -uo pipefail
B=target/ls
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20 ALL_PARTS="checks ab apps sanitizer"
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
part checks && five_width_checks 2>&1 | tee "$OUT/checks.log"
part ab && variant_rounds "nosend mlp_4096x7168" 1,2,9,16 1,2,8,16 2>&1 | tee "$OUT/ab.log"
part apps && {
  llama_apps
  run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/apps.log"
part sanitizer && sanitize_layers symm_ 1,2,16 2>&1 | tee "$OUT/sanitizer.log"
