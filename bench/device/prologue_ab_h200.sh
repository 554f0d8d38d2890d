#!/usr/bin/env bash
# Issue 32, session 8, one H200: the pair's RMSNorm prologue staging (mma16)
# reading each row once (the statistic's pass keeps the row in its staged
# place; per-vector sum chains; the norm weight in 16-byte loads), against
# the build before (libmlp_old.so: the same block from 126ed7c), then the
# four widths' checks (forced generated), compute-sanitizer on the pair's
# new staging, and the C++ apps (target/pg.tar.xz from matmul_build.sh
# target/pg, with the old block copied in as layers/libmlp_old.so).
#   (device) bash bench/device/prologue_ab_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
rm -rf target/pg && tar -xJf target/pg.tar.xz
B=target/pg L=$B/layers
export SYMM_TIMEOUT_S=20
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 150 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
{
  for pdl in ${PDLS:-1 0 1}; do
    for lib in mlp_4096x7168 mlp_old; do
      SYMM_PDL=$pdl SYMM_MATMUL=generated run py "$L/lib$lib.so" 4096 7168 --tokens 16 --profile 2,8,16
    done
  done
} 2>&1 | tee "$OUT/ab.log"
{
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,4,5,16,17
  done
  run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 2,16
} 2>&1 | tee "$OUT/checks.log"
{
  for tool in memcheck racecheck; do
    for w in 4096x7168 5120x1728; do
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 250 compute-sanitizer --tool $tool --target-processes all --kernel-name kns=mma16 \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 2,16
    done
  done
} 2>&1 | tee "$OUT/sanitizer.log"
{
  run python3 bench/model/reference.py --out /tmp/ref --m 1 4 9 16 17
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=1,4,16 --iterations=10
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,9,17 --iterations=5
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=1,9,17 --iterations=5
  done
} 2>&1 | tee "$OUT/apps.log"
