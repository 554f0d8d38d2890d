#!/usr/bin/env bash
# Issue 32, session 38 (one H200): the tensor-core GEMVs' raw staging of
# `a` by cp.async (no registers held, so ptxas keeps the weight's first
# loads ahead of it) against 16-byte loads and stores; not kept. Build: a
# scratch compiler (bench/device/stage_async.patch on 6cdabb8,
# SYMM_EXP_STAGE_ASYNC=1 in gemv_mma.rs's stage_rows), layers
# lib{mlp,mlpa,dec,deca}.so (world size 1; `a` = async), mlpa_b (2064/1000),
# mlpa_tp2 (TP 2) in target/exp3.
B=${1:-target/exp3}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
for round in 1 2; do
  for v in mlp mlpa; do
    echo "== $v round $round"
    run py "$L/lib$v.so" 4096 7168 --profile 2,9,16 --profile-copies 3
  done
  for v in dec deca; do
    echo "== $v round $round"
    dec_py "$v" 4096x2048x7168 --profile 2,16 --profile-copies 3
  done
done 2>&1 | grep -v Warning > "$OUT/timing.log"
grep -E "^== (mlp|dec)|wall per call|_mma16|wgmma16" "$OUT/timing.log" | grep -v "^== py"
{
  SYMM_MATMUL=generated run py "$L/libmlpa.so" 4096 7168 --tokens 2,9,16,17
  SYMM_MATMUL=generated run py "$L/libmlpa_b.so" 2064 1000 --tokens 2,9,16,17
  SYMM_MATMUL=generated dec_py deca 4096x2048x7168 --tokens 2,9,16
  SYMM_MATMUL=generated run tp_py 2 "$L/libmlpa_tp2.so" 4096 7168 --tokens 9,16
  SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    run timeout 200 compute-sanitizer --tool memcheck --target-processes all --kernel-name kns=symm_matmul \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlpa_b.so" 2064 1000 --tokens 9,16
} 2>&1 | grep -v Warning > "$OUT/checks.log"
tally checks "$OUT/checks.log"
grep "ERROR SUMMARY" "$OUT/checks.log"
