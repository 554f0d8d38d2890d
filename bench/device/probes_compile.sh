#!/usr/bin/env bash
# Compiles the CUDA probes that share bench/gemv_probe/*.cuh (no run):
#   bash bench/device/probes_compile.sh
set -u
cd "$(dirname "$0")/../.."
A="-O3 -gencode=arch=compute_90a,code=sm_90a"
fail=0
c() { echo "== nvcc $*"; nvcc $A "$@" || fail=1; }
c -std=c++17 -o /tmp/stream_k_down bench/gemv_probe/stream_k_down.cu -lcuda -lcublas
c -o /tmp/lt_algos bench/gemv_probe/lt_algos.cu -lcublasLt -lcublas
c -shared -Xcompiler -fPIC -DSEL_P=1 -DSEL_T=16 -o /tmp/wgmma_p1_t16.so bench/gemv_probe/wgmma_gemm.cu -lcuda
c -shared -Xcompiler -fPIC -o /tmp/tma_gemv.so bench/gemv_probe/tma_gemv.cu -lcuda
echo "compile failures: $fail"
exit $fail
