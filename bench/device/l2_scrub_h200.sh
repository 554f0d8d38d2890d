#!/usr/bin/env bash
# Session 25's diagnostic on one H200 (world size 1, wgmma_prefetch_build.sh's
# layers): behind the 16-row wgmma GEMV the pair ran 1.6-2.1 µs slower than
# behind the default's down kernel (2026-11-28-down16-h200.md). Does the
# pair's time depend on what the kernels before it left in L2? Kernels
# per call at 16 rows in a CUDA graph of 20 calls, forced generated, with
# nothing, a 128 MB read or a 128 MB write between the calls
# (matmul_check.py --profile-scrub), programmatic launch off and on.
#   (device) tar -xJf target/wp.tar.xz -C target && bash bench/device/l2_scrub_h200.sh target/wp
set -uo pipefail
B=${1:?usage: l2_scrub_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
layer_checks_setup
for pdl in 0 1; do
  for scrub in ${SCRUBS:-none read write}; do
    for v in ${VARIANTS:-base wg wgp1k}; do
      echo "== $v SYMM_PDL=$pdl scrub=$scrub"
      SYMM_MATMUL=generated SYMM_PDL=$pdl run py "$L/lib$v.so" 4096 7168 --tokens 16 --profile 16 \
        --profile-scrub "$scrub"
    done
  done
done
