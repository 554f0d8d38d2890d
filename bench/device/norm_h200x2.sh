#!/usr/bin/env bash
# Issue 14's fused all-reduce + residual + RMSNorm on 2x H200, one device
# call: the Llama layers against torch's f32 references (llama_attn_out now
# runs symm_mem.all_reduce_rows_out: one-shot staged at 1 and 16 tokens,
# one-shot at 128 and from 512, two-shot at 256), the runtime GPU tests, then
# the attention-output block fused against unfused (--no-fuse-rows) and
# torch's variants, 1 to 4096 tokens (bench/model/norm_bench.py).
#
#   bench/model/build_apps.sh target/l16
#   sed 's/max_tokens = 2048/max_tokens = 4096/' examples/llama_attn_out.mlir > /tmp/attn4096.mlir
#   LAYER_NAME=attn_fused python/build_layer.sh /tmp/attn4096.mlir target/l16/py
#   LAYER_NAME=attn_unfused SYMM_COMPILE_FLAGS=--no-fuse-rows python/build_layer.sh /tmp/attn4096.mlir target/l16/py
#   (device) bash bench/device/norm_h200x2.sh target/l16
set -uo pipefail
B=${1:?usage: norm_h200x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvidia_libraries
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  tokens=1,16,128,256,512,1024,2048
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 128 256 512 1024 2048
  run "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=$tokens
  SYMM_CUDA_GRAPHS=0 run "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=$tokens
  run "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
  run "$B/symm-launch" -n 2 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/checks.log"
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
for round in 1 2; do
  torchrun --nproc_per_node=2 bench/model/norm_bench.py "$py/libattn_fused.so" "$py/libattn_unfused.so" \
    2>&1 | grep -v Warning
done | tee "$OUT/norm_bench.jsonl"
