#!/usr/bin/env bash
# Issue 32, session 38 (one H200; not kept): the MLP pair with its RMSNorm
# fused (def) against the norm as its own kernels before a prologue-free
# pair (sep), those kernels letting the pair launch as they start (trig),
# and the GEMVs loading their first weight steps before their wait (pre;
# defpre: only that). Build: a scratch compiler with bench/device/sep_norm.patch
# on bd5b05d, the Llama MLP example at world size 1 (4096/7168; _q 3584/9472;
# pre_tp2 at TP 2) compiled with --chip sm_90a under SYMM_EXP_NO_PROLOGUE=1
# (sep), + SYMM_EXP_EARLY_TRIGGER=1 (trig), + SYMM_EXP_PRELOAD=1 (pre);
# defpre: SYMM_EXP_PRELOAD=1 alone; as layers lib<name>.so in target/exp1/layers.
B=${1:-target/exp1}
ALL_PARTS="timing checks"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in 1 2; do
    for v in def sep trig pre defpre; do
      echo "== mlp 4096x7168 $v round $round"
      run py "$L/lib$v.so" 4096 7168 --profile 1,2,8,16 --profile-copies 3
    done
  done
  for v in def_q pre_q; do
    echo "== mlp 3584x9472 $v"
    run py "$L/lib$v.so" 3584 9472 --profile 1,16 --profile-copies 3
  done
fi 2>&1 | grep -v Warning | tee "$OUT/timing.log"
if part checks; then
  {
    SYMM_MATMUL=generated run py "$L/libpre.so" 4096 7168 --tokens 1,2,8,9,15,16
    SYMM_MATMUL=generated run py "$L/libdefpre.so" 4096 7168 --tokens 1,2,8,9,15,16
    SYMM_MATMUL=generated run py "$L/libpre_q.so" 3584 9472 --tokens 1,16
    run tp_py 2 "$L/libpre_tp2.so" 4096 7168 --tokens 1,16,17,128
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
