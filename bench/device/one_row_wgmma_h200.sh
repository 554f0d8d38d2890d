#!/usr/bin/env bash
# Issue 32, session 44 (scratch): does the 8-row wgmma kernel beat the
# one-row GEMV (gemv1) on calls of 1 row? Build (here, on 8d526dd): a
# runtime and symm-launch in DIR (from a matmul_build.sh DIR), then
#   bench/device/baseline_layers.sh DIR mlp dec
#   SYMM_EXP_ONE=1 bench/device/baseline_layers.sh DIR mlpO decO
# with bench/device/eight_one_row.patch applied: insert_ring puts the 8-row kernel at
# the front of the GEMVs where SYMM_EXP_ONE is set (so it takes calls of
# 1 row too). Runs: the down projection alone at 1 and 2 rows (down_alone,
# 3 rounds), then the MLP block and TP 8's decoder at 1 row, each way.
#   bash bench/device/one_row_wgmma_h200.sh target/one
B=${1:-target/one}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
ROUNDS=3 down_alone "mlp mlpO" 1,2 | tee "$OUT/alone.log"
for v in mlp mlpO; do
  SYMM_MATMUL=generated run py "$L/lib${v}_4096x7168.so" 4096 7168 --tokens 1 --profile 1 --profile-copies 3
done 2>&1 | grep -E "^== |us wall|us x1|PASS|FAIL" | tee "$OUT/blocks.log"
for v in dec decO; do
  SYMM_MATMUL=generated dec_py "${v}_4096x512x1792" 4096x512x1792 --tokens 1 --profile 1 --profile-copies 3
done 2>&1 | grep -E "^== |us wall|us x1|PASS|FAIL" | tee -a "$OUT/blocks.log"
