#!/usr/bin/env bash
# Session 28, one H200, timing only: what staging the rows of `a` costs the
# tensor-core GEMVs at 16 rows. A scratch compiler (nostage.patch:
# SYMM_EXP_NO_STAGE=single skips the staging of the single matmuls (down,
# o_proj), =all also the pair's RMSNorm prologue; the kernels then read
# whatever shared memory holds, so their outputs are wrong and only their
# times count) builds the world-size-1 MLP block and decoder half-layer as
# libmlp_ns_{single,all}.so and libdec_ns_{single,all}.so beside the
# default build's libmlp_4096x7168.so and libdec_4096x2048x7168.so.
# Kernels per call in a CUDA graph on 3 weight copies, forced generated,
# two rounds.
#   (device) bash bench/device/nostage_probe_h200.sh  (build in target/s28)
. bench/device/lib.sh
B=target/s28; L=$B/layers
for round in 1 2; do
  for v in mlp_4096x7168 mlp_ns_single mlp_ns_all; do
    echo "== $v round $round"
    SYMM_MATMUL=generated py $L/lib$v.so 4096 7168 --tokens 16 --profile 16 --profile-copies 3 2>&1 | grep -E "us wall|us x1"
  done
  for v in dec_4096x2048x7168 dec_ns_single dec_ns_all; do
    echo "== $v round $round"
    SYMM_MATMUL=generated py $L/lib$v.so 4096 7168 --decoder 2048 --tokens 16 --profile 16 --profile-copies 3 2>&1 | grep -E "us wall|us x1"
  done
done
