#!/usr/bin/env bash
# Issue 32, session 43 (scratch, bench/device/down_diag.patch applied:
# SYMM_EXP_DOWN=a_once|no_mma|both prices `a`'s copies and the multiplies
# of the 16-row wgmma GEMV, timing only (wrong results by design);
# SYMM_EXP_CHAINS=n spreads each stage's wgmmas over n accumulators;
# with bench/device/early_release.patch instead, on c62ac2f,
# SYMM_EXP_RELEASE=early releases each stage once its own wgmmas are done).
# The down projection alone (programmatic launch off) in the 4096/7168
# block at world size 1, forced generated, beside cuBLAS; $ROUNDS rounds.
# Build (here): for each variant V with its variables,
#   symm-compile mlp.mlir (world_size(1)) --chip sm_90a -> $B/layers/libdown_V.so
B=${1:-target/ra}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
export CUDA_VISIBLE_DEVICES=0
V=${VARIANTS:-c1 c2 c4 c8 both}
FIRST=${V%% *}
for round in $(seq 1 ${ROUNDS:-4}); do
  for v in $V; do
    echo "== round $round $v"
    SYMM_MATMUL=generated SYMM_PDL=0 py $B/layers/libdown_$v.so 4096 7168 --tokens ${TOKENS:-2,16} --profile 2,16 --profile-copies 3 2>&1 | grep -E "us wall|wgmma16|FAIL|PASS"
  done
  echo "== round $round library"
  SYMM_MATMUL=library SYMM_PDL=0 py $B/layers/libdown_${FIRST}.so 4096 7168 --tokens 2 --profile 2,16 --profile-copies 3 2>&1 | grep -E "us wall|nvjet.*tss|FAIL"
done
