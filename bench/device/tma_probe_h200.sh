#!/usr/bin/env bash
# Issue 32, session 8: the TMA-pipelined skinny matmul probe
# (bench/gemv_probe/tma_gemv.cu) beside cuBLAS and the floor of the same
# bytes, on one GPU.
#   (device) bash bench/device/tma_probe_h200.sh   (kind nvidia-h200)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stream_read bench/floor/stream_read.cu &
  time nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
    -o /tmp/tma_gemv.so bench/gemv_probe/tma_gemv.cu -lcuda
  wait
  run timeout 120 /tmp/stream_read 117440512 58720256
  cd bench/gemv_probe && run timeout 400 python3 tma_probe.py /tmp/tma_gemv.so
} 2>&1 | tee "$OUT/tma_probe.log"
