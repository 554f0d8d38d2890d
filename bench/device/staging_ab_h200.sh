#!/usr/bin/env bash
# Issue 32, session 6: the GEMVs' rows of `a` staged in one round of loads
# (gemv1: each thread holds its vectors of the row for the statistic and
# the elements; mma16: up to MAX_BATCH pieces per thread per round, 8 or
# 16) against the build before (old), one H200, world size 1, the MLP
# block 4096/7168 with the generated kernels forced: checks, the
# per-kernel profile and the wall per call in a CUDA graph, twice in
# alternating order. (Its first version also ran ptxas -v on the PTX that
# --emit ptx writes, which holds every GPU module in one file: ptxas
# refused it, and resources.log stayed empty; dropped.)
#
#   (here)   target/ab: libmlp_{old,new8,new16}.so
#            (VARIANTS picks others: later, "old held lanes", where held is
#            new16 and lanes adds the shared output elements)
#   (device) bash bench/device/staging_ab_h200.sh target/ab
set -uo pipefail
B=${1:?usage: staging_ab_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=$B/layers
py() { SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 150 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
{
  for round in 1 2; do
    order=${VARIANTS:-old new8 new16}
    [ $round = 2 ] && order=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ')
    for v in $order; do
      echo "== round $round: $v"
      py "$L/libmlp_$v.so" 4096 7168 --tokens 1,2,5,16 --profile 1,2,4,8,16
    done
  done
} 2>&1 | tee "$OUT/ab.log"
