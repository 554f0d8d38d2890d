#!/usr/bin/env bash
# Issue 32, session 40 (one H200): "the generated matmul alone reads its
# weight at least as fast as cuBLAS on the same shape", in one call: the
# probe bench/gemv_probe/lt_algos.cu (cuBLAS's default call, every kernel
# of cuBLASLt's heuristic list, torch's one GEMM over the concatenated
# weight; the bare gate+up pair and the down projection's split-K slices,
# no norm, no activation) beside build $B's MLP block and decoder half-layer
# (TP 2's widths at world size 1) forced generated with programmatic launch
# off, kernels per call in a CUDA graph, 3 weight copies, at 2 and 16 rows.
# Build: target/fin of stage_columns_final_h200.sh.
#   bash bench/device/alone_anchor_h200.sh target/fin
B=${1:-target/fin}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/lt_algos bench/gemv_probe/lt_algos.cu -lcublasLt -lcublas
for round in 1 2; do
  PROBE_ROWS=2,16 run timeout 120 /tmp/lt_algos 8
  SYMM_MATMUL=generated SYMM_PDL=0 run py "$L/libmlp_4096x7168.so" 4096 7168 --profile 2,16 --profile-copies 3
  SYMM_MATMUL=generated SYMM_PDL=0 dec_py dec_4096x2048x7168 4096x2048x7168 --profile 2,16 --profile-copies 3
done 2>&1 | grep -v Warning | tee "$OUT/alone_anchor.log"
