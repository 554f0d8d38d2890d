#!/usr/bin/env bash
# Issue 32, session 8: the TMA GEMV against mma16 without programmatic
# launch (SYMM_PDL=0), and ncu of both kinds at 16 rows (target/tg.tar.xz
# from tma_gemv_build.sh).
set -uo pipefail
. bench/device/lib.sh
rm -rf target/tg && tar -xJf target/tg.tar.xz
B=target/tg L=$B/layers
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model timeout 150 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
for lib in mlp_4096x7168 mlp_notma; do
  SYMM_PDL=0 SYMM_MATMUL=generated run py "$L/lib$lib.so" 4096 7168 --tokens 16 --profile 2,16
done
for k in tma16 mma16; do
  lib=mlp_4096x7168; [ $k = mma16 ] && lib=mlp_notma
  SYMM_PDL=0 SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    run timeout 200 ncu --target-processes all --kernel-name regex:"symm_matmul_[01]_$k" --launch-skip 4 --launch-count 2 \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats --section MemoryWorkloadAnalysis \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/lib$lib.so" 4096 7168 --tokens 16
done
