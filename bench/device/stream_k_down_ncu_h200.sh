#!/usr/bin/env bash
# Issue 32, session 43 (one H200): ncu on the down projection at 16 rows
# (Llama-3-8B, TP-2 rank, two split-K slices into f32): cuBLAS's kernel
# (through bench/gemv_probe/stream_k_down.cu), that probe's 128-block ring,
# and the compiler's wgmma16 in build $B's MLP block (forced generated,
# programmatic launch off). Launch statistics, speed of light, memory.
#   bash bench/device/stream_k_down_ncu_h200.sh target/rs
B=${1:-target/rs}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvidia_libraries
export CUDA_VISIBLE_DEVICES=0
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Xptxas -v -o /tmp/stream_k_down \
  bench/gemv_probe/stream_k_down.cu -lcuda -lcublas 2>&1 | grep -E "C75|registers|error" | head
NCU="ncu --section LaunchStats --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_op_read_hit_rate.pct,sm__cycles_active.avg"
{
  PROBE_ROWS=16 PROBE_VARIANTS=1 run timeout 200 $NCU --kernel-name regex:nvjet --launch-skip 5 --launch-count 1 /tmp/stream_k_down
  PROBE_ROWS=16 PROBE_VARIANTS=1 run timeout 200 $NCU --kernel-name regex:streamk_down --launch-skip 5 --launch-count 1 /tmp/stream_k_down
  SYMM_MATMUL=generated SYMM_PDL=0 run timeout 200 $NCU --kernel-name regex:wgmma16 --launch-skip 2 --launch-count 1 \
    env SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$B/layers/libmlp_4096x7168.so" 4096 7168 --tokens 16
} 2>&1 | tee "$OUT/ncu.log"
