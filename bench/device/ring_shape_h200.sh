#!/usr/bin/env bash
# Runs ring_shape_build.sh's rings on one H200 (issue 32, session 42): the
# 4096/7168 block forced generated, 3 weight copies, kernels per call in a
# CUDA graph at 9 and 16 rows, PDL on (the block) and off (each kernel
# alone), two rounds; then each ring checked at 2, 9, 16 and 17 rows.
#   bash bench/device/ring_shape_h200.sh target/rs
B=${1:-target/rs}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
variants="mlp0_4096x7168 mlp_4096x7168 ${RINGS:-ring_10x128 ring_16x64 ring_4x256 ring_6x128 ring_5x256}"
{
  for pdl in 1 0 1; do
    for v in $variants; do
      echo "== $v pdl$pdl"
      SYMM_MATMUL=generated SYMM_PDL=$pdl run py "$L/lib$v.so" 4096 7168 --profile 9,16 --profile-copies 3
    done
  done
} 2>&1 | grep -v Warning | tee "$OUT/timing.log"
for v in $variants; do
  SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --tokens 2,9,16,17
done 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
