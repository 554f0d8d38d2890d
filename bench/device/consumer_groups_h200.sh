#!/usr/bin/env bash
# Runs consumer_groups_build.sh's build on one H200 (issue 32, session 44):
# the wgmma rings with two consumer warpgroups (W) against one.
#   alone    down_alone: the down projection alone at 2, 8, 9 and 16 rows,
#            one group, two, cuBLAS; ROUNDS rounds (5)
#   timing   blocks_ab at 2, 8 and 16 rows, 2 rounds
#   sanitize memcheck and racecheck of the two-group kernels at 2, 8, 9, 16
#   bash bench/device/consumer_groups_h200.sh target/wg
B=${1:-target/wg}
ALL_PARTS="alone timing sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part alone; then
  ROUNDS=${ROUNDS:-5} down_alone "mlp mlpW" 2,8,9,16 | tee "$OUT/alone.log"
fi
if part timing; then
  ROUNDS=2 blocks_ab "mlp:dec mlpW:decW" 2,8,16 2,8,16 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part sanitize; then
  SANITIZE_SUFFIX=_wg2 SANITIZE_KERNELS=wgmma SANITIZE_TOKENS=2,8,9,16 sanitize_mma "memcheck racecheck" 4096x7168 2>&1 \
    | tee "$OUT/sanitize.log"
fi
