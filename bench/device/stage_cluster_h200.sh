#!/usr/bin/env bash
# Issue 32, session 32: the pair GEMV's staged rows shared by cluster
# multicast (--matmul-mma-stage-cluster, opt-in). One H200:
#   1. against torch's f32 reference, forced generated at every GEMV edge
#      and measured, the MLP block built with clusters of 4 at four widths
#      (112, 16, 27 and 128 blocks: clusters of 4, 4, none, 4), TP 2 with
#      the ranks sharing the GPU, and the C++ app;
#   2. compute-sanitizer memcheck, racecheck and synccheck over every kernel
#      of the 4096/7168 block with clusters of 4;
#   3. kernels per call of the 4096/7168 block: no cluster (c0), clusters
#      of 2, 4 and 8, 3 weight copies, two rounds.
#   Scratch patch (measured slower, not kept): git apply bench/device/stage_cluster.patch
#   (here) WIDTHS="4096x7168 2064x1000 5120x1728 3072x8192" TP_WORLDS=2 \
#            LAYER_FLAGS="--chip sm_90a --matmul-mma-stage-cluster 4" bench/device/matmul_build.sh target/cl
#          and the 4096/7168 block (bench/device/variant_layers.sh's mlp.mlir) as
#          target/cl/layers/libmlp_c{0,2,8}.so with --matmul-mma-stage-cluster 0, 2, 8
#   (device) bash bench/device/stage_cluster_h200.sh target/cl
B=${1:-target/cl}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
{
  for w in 4096x7168 2064x1000 5120x1728 3072x8192; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,8,9,15,16,17
    run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 2,16,128
  done
  for v in c2 c8; do
    SYMM_MATMUL=generated run py "$L/libmlp_$v.so" 4096 7168 --tokens 1,2,9,16
  done
  for w in 4096x7168 2064x1000; do
    SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,9,16,17
  done
  tp2_mlp_checks ""
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
{
  for tool in memcheck racecheck synccheck; do
    SYMM_MATMUL=generated SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      timeout 150 compute-sanitizer --tool $tool --target-processes all \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_4096x7168.so" 4096 7168 \
      --tokens 2,16 2>&1 | grep "SUMMARY\|Internal\|PASS\|FAIL\|rror" | sort | uniq -c | cut -c1-200
    echo "== $tool done"
  done
} 2>&1 | tee "$OUT/sanitize.log"
for round in 1 2; do
  for v in c0 c2 4096x7168 c8; do
    echo "== libmlp_$v round $round"
    SYMM_MATMUL=generated run py "$L/libmlp_$v.so" 4096 7168 --tokens 16 --profile 2,8,16 --profile-copies 3
  done
done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
