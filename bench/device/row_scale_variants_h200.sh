#!/usr/bin/env bash
# Issue 32, session 9: the row-scale staging's variants (target/pf, built
# from one scratch build: `fold16` the default, `fold8` fewer
# vectors in flight per lane in the statistic's pass, `whole` with
# --no-matmul-row-scale): mma16's registers and spills (ptxas -v on the
# PTX the layers embed), then the pair per call in a CUDA graph, two
# rounds, forced generated.
#   (device) bash bench/device/row_scale_variants_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
B=target/pf
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for v in ${VARIANTS:-fold16 fold8 whole}; do
  echo "== $v resources"
  ptxas -arch=sm_90 -v "$B/ptx/$v.ptx" -o /dev/null 2>&1 | grep -A3 "entry function 'symm_matmul_0_mma16'" | grep -E "registers|spill"
done 2>&1 | tee "$OUT/resources.log"
variant_rounds "${VARIANTS:-fold16 fold8 whole}" 2,16 2,8,16 2>&1 | tee "$OUT/variants.log"
