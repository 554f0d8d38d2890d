#!/usr/bin/env bash
# Runs ring_widths_build.sh's blocks on one H200 (issue 32, session 42):
# each width with and without the after-GEMV ring, forced generated, 3
# weight copies, kernels per call in a CUDA graph at 2, 8 and 16 rows, PDL
# on, two rounds; then the ring's blocks checked at 2, 9, 16 and 17 rows.
#   bash bench/device/ring_widths_h200.sh target/rw
B=${1:-target/rw}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
widths=${WIDTHS:-8192x14336 6656x8960 5120x6912}
for round in 1 2; do
  for w in $widths; do
    for v in noring ring; do
      echo "== ${v}_$w round $round"
      SYMM_MATMUL=generated run py "$L/lib${v}_$w.so" "${w%x*}" "${w#*x}" --profile 2,8,16 --profile-copies 3
    done
  done
done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
for w in $widths; do
  SYMM_MATMUL=generated run py "$L/libring_$w.so" "${w%x*}" "${w#*x}" --tokens 2,9,16,17
done 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
