#!/usr/bin/env bash
# Session 28, one H200: the MLP block's pair (the call's first kernel, so
# no programmatic launch and no prefetch) prefetching its first P 16-row
# steps into L2 before its RMSNorm prologue (pair_prefetch.patch:
# SYMM_EXP_PAIR_PREFETCH=P at compile time; libmlp_pf<P>.so, P = 0 is the
# default kernel). nostage_probe_h200.sh put the prologue at 2.7 µs of the
# block's wall at 16 rows. Forced generated, 3 weight copies, two rounds.
#   (device) bash bench/device/pair_prefetch_h200.sh target/s30
. bench/device/lib.sh
B=${1:?usage: pair_prefetch_h200.sh BUILD}; L=$B/layers
for round in 1 2; do
  for p in 0 4 8 16; do
    echo "== pf$p round $round"
    SYMM_MATMUL=generated py $L/libmlp_pf$p.so 4096 7168 --tokens 2,16 --profile 2,16 --profile-copies 3 2>&1 \
      | grep -E "PASS|FAIL|us wall|mma16"
  done
done
