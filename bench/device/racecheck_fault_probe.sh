#!/usr/bin/env bash
# Issue 32, sessions 30-31: which kernel faults under racecheck in layers of
# MLP width 1000 (2026-11-28-short-grid-wgmma-h200x2.md)? The MLP block
# 2064/1000 (matmul_build.sh WIDTHS=2064x1000) at 16 rows under racecheck:
#   - instrumenting none of its kernels (kns=nomatch), forced generated
#     (its down projection, K = 1000, still takes cuBLAS) and all-cuBLAS;
#   - every kernel instrumented, forced generated, in graphs and eager
#     (SYMM_CUDA_GRAPHS=0);
#   - only symm's kernels (kns=symm_) and only the 4096/7168 block beside,
#     to tell the width from the sanitizer.
B=${1:-target/s31}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
probe() { # LABEL LIB D F FILTER [ENV...]
  local label=$1 lib=$2 d=$3 f=$4 filter=$5
  shift 5
  env "$@" SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 150 compute-sanitizer --tool racecheck --target-processes all $filter \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/$lib" "$d" "$f" --tokens 16 2>&1 \
    | grep "SUMMARY\|Internal\|PASS\|FAIL\|Error\|error" | sort | uniq -c | cut -c1-220
  echo "== racecheck $label done (status ${PIPESTATUS[0]})"
}
probe "2064x1000 none instrumented, generated" libmlp_2064x1000.so 2064 1000 "--kernel-name kns=nomatch" SYMM_MATMUL=generated
probe "2064x1000 none instrumented, library" libmlp_2064x1000.so 2064 1000 "--kernel-name kns=nomatch" SYMM_MATMUL=library
probe "2064x1000 all, generated" libmlp_2064x1000.so 2064 1000 "" SYMM_MATMUL=generated
probe "2064x1000 all, generated, eager" libmlp_2064x1000.so 2064 1000 "" SYMM_MATMUL=generated SYMM_CUDA_GRAPHS=0
probe "2064x1000 all, library, eager" libmlp_2064x1000.so 2064 1000 "" SYMM_MATMUL=library SYMM_CUDA_GRAPHS=0
probe "4096x7168 all, generated" libmlp_4096x7168.so 4096 7168 "" SYMM_MATMUL=generated
