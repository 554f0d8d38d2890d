#!/usr/bin/env bash
# Session 25's L2-state experiment (not yet run: the session's device time
# was spent), about 3 minutes on one H200:
#  1. bench/gemv_probe/l2_state.cu: does a 117 MB streaming read run faster
#     behind a 58.7 MB read that prefetched its lines into L2 than behind
#     one by the TMA or a 128 MB scrub, with the same bytes read every
#     iteration (as the layer benches do) and with 3 copies rotated (as a
#     model's layers are)?
#  2. With BUILD_DIR (wgmma_prefetch_build.sh's layers): the MLP block's
#     kernels per call at 16 rows, forced generated, `base` (the default
#     down kernel) and `wg` (the 16-row wgmma GEMV), with the same weights
#     every call and with 3 copies in turn (matmul_check.py
#     --profile-copies), programmatic launch off and on. If the pair is 2 µs
#     faster behind `base` only with one copy, that gain is the bench's.
#   (here)   WIDTHS=4096x7168 bench/device/wgmma_prefetch_build.sh target/wp && tar -cJf target/wp.tar.xz -C target wp
#   (device) tar -xJf target/wp.tar.xz -C target && bash bench/device/l2_state_h200.sh target/wp
set -uo pipefail
. "$(dirname "$0")/lib.sh"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/l2_state bench/gemv_probe/l2_state.cu &&
  run timeout 120 /tmp/l2_state
[[ $# -ge 1 ]] || exit 0
B=$1
nvidia_libraries
layer_checks_setup
for pdl in 0 1; do
  for copies in 1 3; do
    for v in base wg; do
      echo "== $v SYMM_PDL=$pdl copies=$copies"
      SYMM_MATMUL=generated SYMM_PDL=$pdl run py "$L/lib$v.so" 4096 7168 --tokens 16 --profile 16 \
        --profile-copies "$copies"
    done
  done
done
