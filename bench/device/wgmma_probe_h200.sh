#!/usr/bin/env bash
# Issue 32, session 16: the wgmma skinny-matmul probe
# (bench/gemv_probe/wgmma_gemm.cu, the weight as wgmma's A operand through a
# TMA ring) beside cuBLAS and the floor of the same bytes, on one GPU.
#   (device) bash bench/device/wgmma_probe_h200.sh   (kind nvidia-h200)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-0}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stream_read bench/floor/stream_read.cu &
  start=$SECONDS
  for p in 1 2; do for t in 16 32 64 128; do
    nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC -DSEL_P=$p -DSEL_T=$t \
      -Xptxas -v -o /tmp/wgmma_p${p}_t${t}.so bench/gemv_probe/wgmma_gemm.cu -lcuda \
      > /tmp/nvcc_p${p}_t${t}.log 2>&1 || { echo "nvcc p=$p t=$t failed"; cat /tmp/nvcc_p${p}_t${t}.log | head -40; } &
  done; done
  wait
  echo "built in $((SECONDS - start)) s"
  grep -h "registers\|spill" /tmp/nvcc_p*_t*.log | sort | uniq -c | sort -rn | head -12
  run timeout 120 /tmp/stream_read 117440512 58720256
  cd bench/gemv_probe && run timeout 500 python3 wgmma_probe.py /tmp
} 2>&1 | tee "$OUT/wgmma_probe.log"
