#!/usr/bin/env bash
# Issue 32 on 2 GPUs in one device call: the weight-read floor of the MLP
# block's bytes (bench/floor: the fastest streaming-read kernel of a sweep,
# and cuBLAS reading the same bytes), the register-streaming matmul probe
# (bench/gemv_probe) beside cuBLAS, then the Llama MLP block and decoder
# half-layer against torch.compile + CUDA graphs (matmul_layers_x2.sh), so
# that ours / floor and ours / torch.compile come from the same machine.
#
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/x2/layers
#            python/build_layer.sh examples/llama_decoder.mlir target/x2/layers
#   (device) bash bench/device/floor_layers_x2.sh target/x2   (kind nvidia-h200-x2)
set -uo pipefail
B=${1:?usage: floor_layers_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stream_read bench/floor/stream_read.cu
nvcc -O3 -arch=sm_90a -shared -Xcompiler -fPIC -o /tmp/regmma.so bench/gemv_probe/regmma.cu
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  CUDA_VISIBLE_DEVICES=0 run timeout 200 /tmp/stream_read 176160768 117440512 58720256
  CUDA_VISIBLE_DEVICES=0 run timeout 100 python3 bench/floor/floor.py 176160768 117440512 58720256
} 2>&1 | tee "$OUT/floor.log"
CUDA_VISIBLE_DEVICES=0 run timeout 200 python3 bench/gemv_probe/probe.py /tmp/regmma.so 2>&1 | tee "$OUT/probe.log"
OUT=$OUT bash "$(dirname "$0")/matmul_layers_x2.sh" "$B"
