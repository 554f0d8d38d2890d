#!/usr/bin/env bash
# Issue 32, session 30: racecheck on the short-grid wgmma GEMV with a K
# tail alone (2048x1040x1000: o_proj K = 1040, N = 2048) and a partial
# column tile alone (2064x1024x1000: K = 1024, N = 2064), build
# target/s30d (matmul_build.sh, --chip sm_90a).
B=${1:-target/s30d}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
san() { # tool lib d f a tokens
  SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 200 compute-sanitizer --tool "$1" --target-processes all --kernel-name kns=wgmma16 \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/$2" "$3" "$4" --decoder "$5" --tokens "$6" 2>&1 \
    | grep "SUMMARY\|Internal\|PASS\|FAIL\|Error\|Invalid\|hazard" | cut -c1-200
  echo "== $1 $2 $6 done"
}
san racecheck libdec_2048x1040x1000.so 2048 1000 1040 16
san racecheck libdec_2064x1024x1000.so 2064 1000 1024 16
# The same layer built for sm_90 (no wgmma kernel to instrument), and the
# sm_90a one under memcheck on every kernel.
if [[ ${PROBE:-} == more ]]; then
  san racecheck libdec_2064x1040x1000_sm90.so 2064 1000 1040 16
  SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 200 compute-sanitizer --tool memcheck --target-processes all \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libdec_2064x1040x1000.so" 2064 1000 \
    --decoder 1040 --tokens 16 2>&1 | grep "SUMMARY\|Internal\|PASS\|FAIL\|Invalid\|at 0x\|by thread" | head -20 | cut -c1-250
  echo "== memcheck all kernels done"
  SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 200 compute-sanitizer --tool racecheck --target-processes all --kernel-name kns=symm_matmul_0 \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libdec_2064x1040x1000.so" 2064 1000 \
    --decoder 1040 --tokens 2,16 2>&1 | grep "SUMMARY\|Internal\|PASS\|FAIL\|Error\|hazard" | cut -c1-200
  echo "== racecheck symm_matmul_0 (o_proj's kernels) done"
fi
