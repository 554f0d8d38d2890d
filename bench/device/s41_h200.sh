#!/usr/bin/env bash
# Issue 32, session 41 (one H200): two scratch variants against HEAD in one
# call, then compute-sanitizer at one row.
#   sf: bench/device/stage_few.patch (SYMM_EXP_STAGE_FEW=1): the single
#       matmuls and the decoder's pair stage `a` at 2-8 rows too;
#   pr: SYMM_EXP_PREFETCH_REST=6 (a scratch change in gemv_mma.rs, kept in
#       bench/device/prefetch_rest.patch): after its wait the down
#       projection prefetches the 6 steps past its 8 prefetched ones into
#       L2 while it stages `a`.
# Build (on HEAD with both patches applied; each variable is read by
# symm-compile, so one tree gives all three):
#   W="4096x7168 2064x1000 5120x1728"; F="--chip sm_90a"
#   WIDTHS=$W TP_WORLDS=2 DECODER_WIDTHS=4096x2048x7168 LAYER_FLAGS=$F bench/device/matmul_build.sh target/s41a
#   SYMM_EXP_STAGE_FEW=1 (same) target/s41sf; SYMM_EXP_PREFETCH_REST=6 WIDTHS=4096x7168 (same) target/s41pr
#   target/s41 = s41a with the variants' layers as lib<name>_sf.so / _pr.so,
#   symm-gpu-tests dropped, the apps in apps.tar.xz.
#   bash bench/device/s41_h200.sh target/s41
B=${1:-target/s41}
ALL_PARTS="timing alone checks sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in 1 2; do
    for v in "" _sf _pr; do
      echo "== mlp$v round $round"
      SYMM_MATMUL=generated run py "$L/libmlp_4096x7168$v.so" 4096 7168 --profile 1,2,4,8,16 --profile-copies 3
    done
    for v in "" _sf _pr; do
      echo "== dec$v round $round"
      SYMM_MATMUL=generated dec_py "dec_4096x2048x7168$v" 4096x2048x7168 --profile 2,8,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part alone; then
  for v in "" _sf _pr; do
    echo "== mlp$v alone"
    SYMM_MATMUL=generated SYMM_PDL=0 run py "$L/libmlp_4096x7168$v.so" 4096 7168 --profile 2,8,16 --profile-copies 3
  done 2>&1 | grep -v Warning | tee "$OUT/alone.log"
fi
if part checks; then
  {
    for w in 4096x7168 2064x1000 5120x1728; do
      SYMM_MATMUL=generated run py "$L/libmlp_${w}_sf.so" "${w%x*}" "${w#*x}" --tokens 1,2,3,5,8,9,16,17
      SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_${w}_sf.so" "${w%x*}" "${w#*x}" --tokens 2,5,8
    done
    SYMM_MATMUL=generated dec_py dec_4096x2048x7168_sf 4096x2048x7168 --tokens 1,2,5,8,9,16,17
    SYMM_MATMUL=generated run tp_py 2 "$L/libdec_tp2_4096x2048x7168_sf.so" 4096 7168 --decoder 2048 --tokens 2,8
    SYMM_MATMUL=generated run py "$L/libmlp_4096x7168_pr.so" 4096 7168 --tokens 1,2,8,9,16,17
    SYMM_MATMUL=generated dec_py dec_4096x2048x7168_pr 4096x2048x7168 --tokens 1,2,9,16
    apps_checks 1,9,16,17 1,9,16,17
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  {
    SANITIZE_TOKENS=1 sanitize_mma "memcheck racecheck" "4096x7168 5120x1728"
    SANITIZE_TOKENS=1 SANITIZE_RANKS=2 sanitize_mma "memcheck" "4096x7168"
    SANITIZE_TOKENS=2,8 SANITIZE_SUFFIX=_sf sanitize_mma "memcheck racecheck" "4096x7168 5120x1728"
  } 2>&1 | tee "$OUT/sanitize.log"
fi
