#!/usr/bin/env bash
# Issue 32, session 32: bench/gemv_probe/l2_handoff.cu on one H200 (can the
# pair's 20 idle SMs hand the down projection part of its weight through
# L2?). Two runs (the second a repeat).
#   (device) bash bench/device/l2_handoff_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/l2_handoff bench/gemv_probe/l2_handoff.cu || exit 1
[ -z "${BAND_ONLY:-}" ] && run timeout 200 /tmp/l2_handoff
# Then the band read (bench/gemv_probe/band_read.cu): a block per 128-byte
# column band against a block per contiguous span, and padded pitches.
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/band_read bench/gemv_probe/band_read.cu || exit 1
[ -z "${STAGE_ONLY:-}" ] && run timeout 200 /tmp/band_read
# Then the staging of `a` alone, by threads, by bulk copies, and multicast
# to clusters of 2-8 blocks (bench/gemv_probe/stage_multicast.cu).
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stage_multicast bench/gemv_probe/stage_multicast.cu || exit 1
run timeout 200 /tmp/stage_multicast
