#!/usr/bin/env bash
# Issue 32, session 30: which kernel faults under racecheck in layers of MLP
# width 1000 (2026-11-28-short-grid-wgmma-h200x2.md)? The MLP block
# 2064/1000 (matmul_build.sh WIDTHS=2064x1000, sm_90) at 16 rows under
# racecheck instrumenting none of its kernels (kns=wgmma16 matches none):
# forced generated (its down projection, K = 1000, still takes cuBLAS),
# then everything on cuBLAS.
B=${1:-target/s30f}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
for way in generated library; do
  SYMM_MATMUL=$way SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 100 compute-sanitizer --tool racecheck --target-processes all --kernel-name kns=wgmma16 \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_2064x1000.so" 2064 1000 --tokens 16 2>&1 \
    | grep "SUMMARY\|Internal\|PASS\|FAIL\|Error" | cut -c1-200
  echo "== racecheck mlp_2064x1000, SYMM_MATMUL=$way done"
done
