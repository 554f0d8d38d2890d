#!/usr/bin/env bash
# Runs prologue_copies_build.sh's build on one H200:
#   1. against torch's f32 reference, forced generated, with 2 copied steps:
#      the MLP block at four widths at every GEMV dispatch edge, TP 2 with
#      the ranks sharing the GPU, and the C++ app at TP 2 sharing it;
#   2. memcheck and racecheck on the tensor-core GEMVs (2 copied steps);
#   3. kernels per call of the 4096/7168 block with 0-3 copied steps, 3
#      weight copies in turn, programmatic launch on, two rounds.
#   (device) bash bench/device/prologue_copies_h200.sh target/cp
B=${1:-target/cp}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
edges=1,2,7,8,9,15,16,17
{
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens "$edges"
  done
  tp2_mlp_checks "4096x7168 2064x1000"
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
sanitize_mma "memcheck racecheck" "4096x7168 2064x1000" 2>&1 | tee "$OUT/sanitize.log"
for round in 1 2; do
  for c in ${COPIES:-0 1 2 3}; do
    echo "== c$c round $round"
    SYMM_MATMUL=generated py "$L/libc$c.so" 4096 7168 --tokens 2,16 --profile 2,8,16 --profile-copies 3 2>&1 \
      | grep -E "PASS|FAIL|us wall|mma16"
  done
done 2>&1 | tee "$OUT/timing.log"
