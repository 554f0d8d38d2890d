#!/usr/bin/env bash
# Issue 32, session 43 (one H200): is the 16-row wgmma GEMV's miss against
# cuBLAS on the Llama-3-8B down projection (TP-2 rank, two split-K slices)
# its tail? bench/gemv_probe/stream_k_down.cu times the compiler's design
# with one tile a block (128 blocks) against the same ring with the work cut
# stream-K over every SM (132, 264 or 396 blocks), beside cuBLAS's call, then
# cuBLASLt's listed kernels for the same GEMMs (lt_algos.cu) in the same call.
#   bash bench/device/stream_k_down_h200.sh
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvidia_libraries
export CUDA_VISIBLE_DEVICES=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv,noheader
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stream_k_down \
  bench/gemv_probe/stream_k_down.cu -lcuda -lcublas || exit 1
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/lt_algos bench/gemv_probe/lt_algos.cu \
  -lcublasLt -lcublas
{
  run timeout 120 /tmp/stream_k_down --timeline
  run timeout 120 /tmp/stream_k_down
  PROBE_ROWS=1,2,16 run timeout 120 /tmp/lt_algos 8
  run timeout 120 /tmp/stream_k_down
} 2>&1 | tee "$OUT/stream_k_down.log"
