#!/usr/bin/env bash
# Issue 32, session 8, one H200: the TMA GEMV with its descriptors
# prefetched (target/tg) against the build before (target/tgA) and mma16,
# without programmatic launch (SYMM_PDL=0) so each kernel's time is its
# own, then with it; the pair without its RMSNorm prologue (nonorm, timing
# only) with and without the TMA GEMV; two TMA tilings.
#   (here)   tma_gemv_build.sh target/tg (and the build before as target/tgA)
#   (device) bash bench/device/tma_ab_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
for b in tg tgA; do rm -rf target/$b && tar -xJf target/$b.tar.xz; done
py() { local B=$1; shift; SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 150 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for pdl in 0 1; do
  for lib in target/tg/layers/libmlp_4096x7168.so target/tgA/layers/libmlp_4096x7168.so \
      target/tg/layers/libmlp_notma.so target/tg/layers/libmlp_nonorm.so target/tg/layers/libmlp_nonorm_notma.so \
      target/tgA/layers/libmlp_nonorm.so target/tg/layers/libmlp_t4_2_128.so target/tg/layers/libmlp_t4_3_64.so; do
    SYMM_PDL=$pdl SYMM_MATMUL=generated run py "${lib%/layers/*}" "$lib" 4096 7168 --tokens 16 --profile 2,16
  done
done 2>&1 | tee "$OUT/tma_ab.log"
