#!/usr/bin/env bash
# Runs l1_staging_build.sh's build on one H200:
#   1. the new build against torch's f32 reference, forced generated, at
#      every GEMV dispatch edge (world size 1), and TP 2 with the ranks
#      sharing the GPU;
#   2. kernels per call, old against new, forced generated, 3 weight copies
#      in turn, programmatic launch on, two rounds, at each width.
#   (device) bash bench/device/l1_staging_h200.sh target/l1
B=${1:-target/l1}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
widths="5120x13824 6656x7168 4096x7168"
{
  for w in $widths; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,7,8,9,15,16,17
    run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 1,9,16,17
  done
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
for round in 1 2; do
  for w in $widths; do
    for v in old mlp; do
      echo "== ${v}_$w round $round"
      SYMM_MATMUL=generated py "$L/lib${v}_$w.so" "${w%x*}" "${w#*x}" --tokens 16 --profile 2,8,16 --profile-copies 3 2>&1 \
        | grep -E "PASS|FAIL|us wall|symm_matmul"
    done
  done
done 2>&1 | tee "$OUT/timing.log"
