#!/usr/bin/env bash
# Runs cluster_build.sh's build on one H200: the wgmma GEMVs in clusters
# sharing `a` against the same compiler without (H). First a smoke check of the
# clustered kernels at 2, 9 and 16 rows under a 60 s bound (a cluster that
# waits on a barrier no block arrives on would hang); only if it passes,
# eight_rows_h200.sh's parts on this build (PARTS picks: alone, timing,
# checks, sanitize).
#   bash bench/device/cluster_h200.sh target/cl
B=${1:-target/cl}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  run timeout 60 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_4096x7168.so" 4096 7168 \
  --tokens 2,9,16 --profile 2,16 --profile-copies 3 2>&1 | tee "$OUT/smoke.log"
if ! grep -q '^exit status 0$' "$OUT/smoke.log" || grep -q 'FAIL ' "$OUT/smoke.log"; then
  echo "smoke check failed: not timing the cluster build"
  exit 1
fi
bash "$(dirname "$0")/eight_rows_h200.sh" "$B"
