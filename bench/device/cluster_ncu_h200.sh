#!/usr/bin/env bash
# Issue 32, session 45 (one H200): why the wgmma GEMVs in clusters of 2
# (cluster_build.sh's build) took twice as long as without (call 1 of
# bench/results/2026-11-29-cluster-multicast-h200.md). ncu's launch,
# occupancy, throughput and warp-state sections on the MLP block's down
# projection (symm_matmul_1_wgmma8, 2 rows, world size 1, no graph) of the
# build and of HEAD (mlpH); then memcheck and racecheck of the clustered
# wgmma kernels at 2, 8, 9 and 16 rows.
#   bash bench/device/cluster_ncu_h200.sh target/cl
B=${1:-target/cl}
ALL_PARTS="ncu sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part ncu; then
  for layer in mlp mlpH; do
    SYMM_MATMUL=generated SYMM_PDL=0 SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=$L/libsymm_runtime.so \
      PYTHONPATH=python:bench/model run timeout 200 ncu --target-processes all \
      --kernel-name regex:"symm_matmul_1_wgmma8" --launch-skip 2 --launch-count 1 \
      --section LaunchStats --section Occupancy --section SpeedOfLight --section WarpStateStats \
      --section MemoryWorkloadAnalysis \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/lib${layer}_4096x7168.so" 4096 7168 \
      --tokens 2
  done 2>&1 | grep -v "^\[rank 0\] PASS\|Warning" | tee "$OUT/ncu.log"
fi
if part sanitize; then
  SANITIZE_KERNELS=wgmma SANITIZE_TOKENS=2,8,9,16 sanitize_mma "memcheck racecheck" 4096x7168 2>&1 \
    | tee "$OUT/sanitize.log"
fi
