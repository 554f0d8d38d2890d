#!/usr/bin/env bash
# Issue 32, session 18, one H200: the single matmuls' TMA GEMV (opt-in
# --matmul-tma-gemv=K_GROUPS,STAGES,STAGE_ROWS) with more weight in flight
# per block (4 x 256 rows = 128 KB, 6 or 8 x 128, 3 x 256) against its
# default (4 x 128 = 64 KB) and the register GEMV (`base`), in the MLP block
# at world size 1, forced generated, programmatic launch on: kernels per call
# and wall in a CUDA graph of 20 calls, two rounds (a pure read in the GEMVs'
# block shape gains with bytes in flight: 2026-11-27-fused-mlp-probe-h200.md).
#   (here)   the layers in target/tv/layers (see the commit that adds this)
#   (device) bash bench/device/tma_depth_h200.sh target/tv
set -uo pipefail
B=${1:?usage: tma_depth_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for v in ${VARIANTS:-base t4_4_128 t4_4_256 t4_6_128 t4_8_128 t2_4_256 t4_3_256}; do
    echo "== $v round $round"
    SYMM_MATMUL=generated run py "$B/layers/lib$v.so" 4096 7168 --tokens 2,16 --profile 2,8,16
  done
done 2>&1 | tee "$OUT/tma_depth.log"
