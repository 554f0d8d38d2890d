#!/usr/bin/env bash
# Issue 32, session 34: the register GEMVs in 128-column bands where
# 64-column ones would waste a wave (GemvTile::widened), forced generated,
# against torch's f32 reference (matmul_check.py) at the dispatch edges, at
# the widths of a TP-2 rank of Qwen2.5-7B, LLaMA-30B, Qwen2.5-32B,
# Llama-2-13B and Llama-3-70B (and Llama-3-8B, unchanged). Build as
# widths_x2.sh says (its world-1 and TP-2 layers). Parts (PARTS, all by
# default): world1 (the pairs, world size 1), sanitize (memcheck and
# racecheck on the widened pairs), tp2 (TP 2 with both ranks on GPU 0: the
# down projections widen only as split-K slices under an all-reduce).
# WORLD1_WIDTHS, SANITIZE_WIDTHS and TP2_WIDTHS replace the parts' widths.
#   (device) bash bench/device/wide_bands_checks.sh target/wx
set -uo pipefail
B=${1:?usage: wide_bands_checks.sh BUILD}
. "$(dirname "$0")/lib.sh"
ALL_PARTS="world1 sanitize tp2"
WORLD1_WIDTHS=${WORLD1_WIDTHS:-3584x9472 6656x8960 5120x13824 5120x6912 8192x14336 4096x7168}
SANITIZE_WIDTHS=${SANITIZE_WIDTHS:-3584x9472 6656x8960}
TP2_WIDTHS=${TP2_WIDTHS:-6656x8960 5120x13824 5120x6912}
layer_checks_setup
if part world1; then
  for w in $WORLD1_WIDTHS; do
    SYMM_MATMUL=generated run py "$B/layers/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,8,9,16,17
  done 2>&1 | tee "$OUT/checks.log" | grep -v PASS
  tally world1 "$OUT/checks.log" | tee -a "$OUT/summary.log"
fi
if part sanitize; then
  SANITIZE_KERNELS=symm_matmul SANITIZE_TOKENS=1,16 sanitize_mma "memcheck racecheck" "$SANITIZE_WIDTHS" 2>&1 |
    tee -a "$OUT/summary.log"
fi
if part tp2; then
  for w in $TP2_WIDTHS; do
    SYMM_MATMUL=generated run tp_py 2 "$B/layers/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,9,16,17
  done 2>&1 | tee "$OUT/tp2.log" | grep -v PASS
  tally tp2 "$OUT/tp2.log" | tee -a "$OUT/summary.log"
fi
