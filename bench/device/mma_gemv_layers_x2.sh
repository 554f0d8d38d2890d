#!/usr/bin/env bash
# Issue 32 on 2 GPUs in one device call, with the tensor-core GEMV for 2 to
# 16 rows: the weight-read floor (bench/floor), the Llama MLP block and the
# decoder half-layer against torch.compile + CUDA graphs
# (matmul_layers_x2.sh, LAYER_TOKENS default 1,2,4,8,16,128) and the
# per-kernel profile (layer_profile.py, PROFILE_TOKENS default 1,4,8,16).
# Correctness and the sanitizer run on one GPU (mma_gemv_h200.sh).
#
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/x2/layers
#            python/build_layer.sh examples/llama_decoder.mlir target/x2/layers
#   (device) bash bench/device/mma_gemv_layers_x2.sh target/x2   (kind nvidia-h200-x2)
set -uo pipefail
B=${1:?usage: mma_gemv_layers_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stream_read bench/floor/stream_read.cu
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  CUDA_VISIBLE_DEVICES=0 run timeout 200 /tmp/stream_read 176160768 117440512 58720256
} 2>&1 | tee "$OUT/floor.log"
LAYER_TOKENS=${LAYER_TOKENS:-1,2,4,8,16,128} OUT=$OUT bash "$(dirname "$0")/matmul_layers_x2.sh" "$B"
SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
  PROFILE_TOKENS=${PROFILE_TOKENS:-1,4,8,16} \
  run timeout 200 torchrun --nproc_per_node=2 bench/model/layer_profile.py "$B/layers/libllama_mlp.so" \
  2>&1 | tee "$OUT/layer_profile.log"
