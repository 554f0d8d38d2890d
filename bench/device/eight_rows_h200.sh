#!/usr/bin/env bash
# Runs eight_rows_build.sh's build on one H200 (issue 32, session 44): the
# 8-row wgmma rings (m64n8k16, calls of 2 to 8 rows) against HEAD (H).
#   alone    programmatic launch off: the down projection alone at 2, 4,
#            8 and 16 rows, HEAD, the build and cuBLAS; ROUNDS rounds (6)
#   timing   blocks_ab: the MLP block and the decoders, HEAD against the
#            build, at 2, 4, 8 and 16 rows; 2 rounds
#   checks   ring_before_wait_h200.sh's (4 widths at 1-17 rows, TP 2 and
#            4 sharing the GPU, the decoders, the C++ apps)
#   sanitize memcheck and racecheck of the wgmma kernels at 2, 8, 9, 16 rows
#   bash bench/device/eight_rows_h200.sh target/e8
B=${1:-target/e8}
ALL_PARTS="alone timing checks sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part alone; then
  down_alone "mlpH mlp" 2,4,8,16 | tee "$OUT/alone.log"
fi
if part timing; then
  ROUNDS=2 blocks_ab "mlpH:decH mlp:dec" 2,4,8,16 2,4,8,16 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part checks; then
  PARTS=checks bash "$(dirname "$0")/ring_before_wait_h200.sh" "$B"
fi
if part sanitize; then
  SANITIZE_KERNELS=wgmma SANITIZE_TOKENS=2,8,9,16 sanitize_mma "memcheck racecheck" 4096x7168 2>&1 \
    | tee "$OUT/sanitize.log"
fi
