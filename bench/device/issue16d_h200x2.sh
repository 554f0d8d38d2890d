#!/bin/bash
# Issue 16, fourth call: two ranks running objects compiled for different
# shapes, and for different world sizes.
cd "$(dirname "$0")/../.."
source bench/device/lib.sh
{
  date -u
  echo "== rank 0: tp_mlp for 64 rows, rank 1: the same program for 128 rows (timeout 5 s)"
  SYMM_TIMEOUT_S=5 pair $B/tp_mlp $B/tp_mlp_m128
  echo "== rank 0: tp_mlp for 2 ranks, rank 1: for 4 ranks (timeout 5 s)"
  SYMM_TIMEOUT_S=5 pair $B/tp_mlp $B/tp_mlp_w4
} 2>&1 | tee "$OUT/issue16d.log"
