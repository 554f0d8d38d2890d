#!/usr/bin/env bash
# Issue 32, session 10, one H200: the pair's RMSNorm applied in the
# tensor-core GEMV's loop (each A fragment made from the raw rows through
# the column factors, the statistic summed by the k-groups; no staging
# pass) against HEAD's staging (libmlp_old.so, compiled by the previous
# symm-compile), forced generated, kernels per call in a CUDA graph,
# alternating, two rounds; ptxas resources of both mma16 kernels; the four
# widths' checks against torch's f32 reference at the dispatch edges
# (forced generated and measured) and the whole-norm build
# (--no-matmul-row-scale, still staged); compute-sanitizer on mma16; the
# C++ apps. target/il.tar.xz: `bench/device/matmul_build.sh target/il`
# plus libmlp_old.so, libmlp_whole.so and both PTX files (ptx/).
#   (device) bash bench/device/in_loop_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
rm -rf target/il && tar -xJf target/il.tar.xz -C target
B=target/il
export SYMM_TIMEOUT_S=20
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PARTS=${PARTS:-ab resources checks sanitizer apps}
if [[ $PARTS == *ab* ]]; then
  ab_rounds "mlp_4096x7168 mlp_old" "${PROFILE:-2,8,16}" 2>&1 | tee "$OUT/ab.log"
fi
if [[ $PARTS == *resources* ]]; then
  for v in new old; do
    echo "== $v"; ptxas -arch=sm_90 -v "$B/ptx/$v.ptx" -o /dev/null 2>&1 | grep -A3 "Compiling entry function '.*_mma16'"
  done 2>&1 | tee "$OUT/resources.log"
fi
if [[ $PARTS == *checks* ]]; then
  widths_checks 2>&1 | tee "$OUT/checks.log"
fi
if [[ $PARTS == *sanitizer* ]]; then
  sanitize_layers "${SANITIZE_KERNELS:-mma16}" "${SANITIZE_TOKENS:-2,16}" 2>&1 | tee "$OUT/sanitizer.log"
fi
if [[ $PARTS == *apps* ]]; then
  llama_apps 2>&1 | tee "$OUT/apps.log"
fi
