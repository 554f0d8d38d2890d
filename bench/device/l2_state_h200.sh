#!/usr/bin/env bash
# Session 25's L2-state probe (bench/gemv_probe/l2_state.cu; not yet run:
# the session's device time was spent): does a 117 MB streaming read run
# faster behind a 58.7 MB read that prefetched its lines into L2 than
# behind one by the TMA or a 128 MB scrub, with the same bytes read every
# iteration (as the layer benches do) and with 3 copies rotated (as a
# model's layers are)? About 10 s of GPU work.
#   (device) bash bench/device/l2_state_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/l2_state bench/gemv_probe/l2_state.cu &&
  run timeout 120 /tmp/l2_state
