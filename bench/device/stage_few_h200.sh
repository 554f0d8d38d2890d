#!/usr/bin/env bash
# Issue 32 (one H200; prepared in session 40, not yet run): the single
# matmuls' and the decoder pair's GEMV staging `a` at 2-8 rows too
# (bench/device/stage_few.patch, SYMM_EXP_STAGE_FEW) against HEAD. Build:
#   WIDTHS="4096x7168 2064x1000 5120x1728" TP_WORLDS=2 DECODER_WIDTHS=4096x2048x7168 \
#     LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/sf0
#   git apply bench/device/stage_few.patch
#   SYMM_EXP_STAGE_FEW=1 WIDTHS="4096x7168 2064x1000 5120x1728" TP_WORLDS=2 \
#     DECODER_WIDTHS=4096x2048x7168 LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/sf
#   git checkout passes/src/matmul/options.rs
#   then target/sf0's libmlp_4096x7168.so and libdec_4096x2048x7168.so as
#   target/sf/layers/lib{mlp0,dec0}_*.so, symm-gpu-tests and the apps dropped.
#   bash bench/device/stage_few_h200.sh target/sf
B=${1:-target/sf}
ALL_PARTS="timing alone checks"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in 1 2 3; do
    for v in mlp0 mlp; do
      echo "== $v 4096x7168 round $round"
      SYMM_MATMUL=generated run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 2,4,8,16 --profile-copies 3
    done
    for v in dec0 dec; do
      echo "== $v 4096x2048x7168 round $round"
      SYMM_MATMUL=generated dec_py "${v}_4096x2048x7168" 4096x2048x7168 --profile 2,8,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part alone; then
  for v in mlp0 mlp; do
    SYMM_MATMUL=generated SYMM_PDL=0 run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 2,8 --profile-copies 3
  done 2>&1 | grep -v Warning | tee "$OUT/alone.log"
fi
if part checks; then
  {
    for w in 4096x7168 2064x1000 5120x1728; do
      SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,3,5,8,9,16,17
      SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 2,5,8
    done
    SYMM_MATMUL=generated dec_py dec_4096x2048x7168 4096x2048x7168 --tokens 1,2,5,8,9,16,17
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
