#!/usr/bin/env bash
# Issue 32, session 40, call 2 (one H200): the norm weight staged in shared
# memory for the `_norm_in_loop` twin (`mlp`, `gelu`) against HEAD (`mlp0`,
# `gelu0`) at five widths and the non-gated GELU block, and the twin taking
# every call of 2 to 16 rows (`mlpall`, SYMM_EXP_TWIN_ALL) rather than
# 9 to 16. Build (scratch variables read by symm-compile):
#   W="4096x7168 3584x9472 3072x8192 5120x1728 2064x1000"
#   SYMM_EXP_STAGE_COLUMNS=1 WIDTHS="$W" GELU_WIDTHS=4096x14336 LAYER_FLAGS="--chip sm_90a" \
#     bench/device/matmul_build.sh target/sd
#   WIDTHS="$W" GELU_WIDTHS=4096x14336 LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/sd0
#   SYMM_EXP_TWIN_ALL=1 SYMM_EXP_STAGE_COLUMNS=1 WIDTHS="$W" TP_WORLDS=2 LAYER_FLAGS="--chip sm_90a" \
#     bench/device/matmul_build.sh target/sda
#   then sd0's layers as lib{mlp0,gelu0}_*.so and sda's as libmlpall{,_tp2}_*.so in target/sd/layers.
# PARTS: timing (forced generated, kernels per call in a CUDA graph, 3 weight
# copies, the builds taking turns), checks (mlpall against torch's f32
# reference at 1-17 rows, five widths, and TP 2 sharing the GPU).
#   bash bench/device/stage_columns2_h200.sh target/sd
B=${1:-target/sd}
ALL_PARTS="timing checks"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in 1 2 3; do
    for v in mlp0 mlp mlpall; do
      echo "== $v 4096x7168 round $round"
      SYMM_MATMUL=generated run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 2,4,8,9,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
  for round in 1 2; do
    for w in 3584x9472 3072x8192 5120x1728; do
      for v in mlp0 mlp mlpall; do
        echo "== $v $w round $round"
        SYMM_MATMUL=generated run py "$L/lib${v}_$w.so" "${w%x*}" "${w#*x}" --profile 2,8,16 --profile-copies 3
      done
    done
    for v in gelu0 gelu; do
      echo "== $v 4096x14336 round $round"
      SYMM_MATMUL=generated run py "$L/lib${v}_4096x14336.so" 4096 14336 --gelu --profile 9,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/widths.log"
fi
if part checks; then
  {
    for w in 4096x7168 2064x1000 3584x9472 3072x8192 5120x1728; do
      SYMM_MATMUL=generated run py "$L/libmlpall_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,3,5,8,9,16,17
    done
    for w in 4096x7168 2064x1000 5120x1728; do
      SYMM_MATMUL=generated run tp_py 2 "$L/libmlpall_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 2,5,8,16
    done
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
