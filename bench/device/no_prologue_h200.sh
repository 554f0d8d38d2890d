#!/usr/bin/env bash
# Issue 32, session 31 (experiment, not kept: 2026-11-28-block-reduce-h200x2.md
# section 6): the MLP block's pair without its fused RMSNorm prologue (a
# scratch compiler, bench/device/no_prologue.patch, with SYMM_EXP_NO_PROLOGUE=1
# when symm-compile runs: the norm runs as its own rows kernel, the pair as
# the decoder's prologue-free GEMVs, launched programmatically behind it)
# against the default, world size 1, forced generated, 3 weight copies,
# kernels per call in a CUDA graph, two rounds.
#   $B/layers/libmlp_{base,noprol}.so: the 4096/7168 block (sm_90a)
B=${1:-target/np}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
for round in 1 2; do
  for v in base noprol; do
    echo "== $v round $round"
    SYMM_MATMUL=generated run py "$L/libmlp_$v.so" 4096 7168 --tokens 1,9,16 --profile 1,4,9,16 --profile-copies 3
  done
done 2>&1 | grep -v Warning | tee "$OUT/no_prologue.log"
