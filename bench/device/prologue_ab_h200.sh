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
sanitize_layers mma16 2,16 2>&1 | tee "$OUT/sanitizer.log"
llama_apps 2>&1 | tee "$OUT/apps.log"
