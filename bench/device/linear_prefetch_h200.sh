#!/usr/bin/env bash
# Session 23, one H200: L2 prefetches before the grid wait in the GEMVs of
# weights stored n x k (gemv_linear's one-row GEMV, gemv_mma_linear's
# 8/16-row ones) of the lone matmul (the down projection), launched early
# behind the pair. Variants liblinear_pf<CC>_<MMA>.so of the 4096/7168
# block at world size 1 (CC: steps the one-row GEMV prefetches, MMA:
# iterations the tensor-core GEMVs do), forced generated: checked against
# torch's f32 reference, then kernels per call in a CUDA graph at
# PROFILE rows, two rounds, beside the row-major block.
#   (device) bash bench/device/linear_prefetch_h200.sh target/lm
set -uo pipefail
B=${1:?usage: linear_prefetch_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
VARIANTS=${VARIANTS:-linear_pf0_0 linear_pf2_1 linear_pf4_2 linear_pf8_4}
PROFILE=${PROFILE:-1,2,8,16}
layer_checks_setup
for round in 1 2; do
  for v in $VARIANTS; do
    echo "== $v round $round"
    SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --linear --tokens 1,2,9,16 --profile "$PROFILE"
  done
  echo "== row-major round $round"
  SYMM_MATMUL=generated run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1 --profile "$PROFILE"
done 2>&1 | tee "$OUT/linear_prefetch.log"
tally checks "$OUT/linear_prefetch.log"
