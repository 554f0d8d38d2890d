#!/usr/bin/env bash
# Issue 32, session 41, call 3 (one H200): the streamed norm (K above about
# 6200: Llama-3-70B's hidden 8192, LLaMA-30B's 6656) reading the norm
# weight's four elements a step from shared memory, staged before its loop
# (bench/device/stream_columns.patch), at its use (`u`: ptxas spills 12
# bytes) or a step ahead with the rows' words (`h`, XX_AHEAD_COLS=1 in
# bench/device/stream_columns_ahead.patch: 0 bytes at 6656/8960, 28 at
# 8192/3584), against HEAD (`a`: 0 bytes at 8192, 4 at 6656).
# Build (one tree with stream_columns_ahead.patch applied):
#   export WIDTHS="8192x3584 6656x8960 8192x14336" TP_WORLDS=2 LAYER_FLAGS="--chip sm_90a"
#   SYMM_EXP_NO_STREAM_COLUMNS=1 bench/device/matmul_build.sh target/s43a
#   bench/device/matmul_build.sh target/s43u; XX_AHEAD_COLS=1 bench/device/matmul_build.sh target/s43h
#   target/s43 = s43a with the others' layers as lib<name>_{u,h}.so, no
#   symm-gpu-tests or apps.
#   bash bench/device/s43_h200.sh target/s43
B=${1:-target/s43}
ALL_PARTS="timing checks sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
W="8192x3584 6656x8960 8192x14336"
if part timing; then
  for round in 1 2; do
    for w in $W; do
      for v in "" _u _h; do
        echo "== mlp_$w$v round $round"
        SYMM_MATMUL=generated run py "$L/libmlp_$w$v.so" "${w%x*}" "${w#*x}" --profile 2,8,16 --profile-copies 3
      done
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part checks; then
  {
    for w in $W; do
      for v in _u _h; do
        SYMM_MATMUL=generated run py "$L/libmlp_$w$v.so" "${w%x*}" "${w#*x}" --tokens 1,2,3,8,9,15,16,17
        SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_$w$v.so" "${w%x*}" "${w#*x}" --tokens 2,9,16
      done
    done
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  for v in _u _h; do
    SANITIZE_TOKENS=2,16 SANITIZE_SUFFIX=$v sanitize_mma "memcheck racecheck" "8192x3584"
  done 2>&1 | tee "$OUT/sanitize.log"
fi
