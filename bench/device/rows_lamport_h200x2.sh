#!/usr/bin/env bash
# The fused all-reduce + residual + RMSNorm taking the Lamport exchange (up
# to ROWS_LAMPORT_MAX, 32 rows of 4096 bf16) on 2x H200, one device call:
# the Llama layers against torch's f32 references (llama_attn_out's 1, 16
# and 32 tokens take it, 33 and 64 the staged kernel), in graphs and not, the runtime GPU tests, then the attention-output
# block fused with Lamport rows, fused staged (--lamport-max-bytes=0, the
# kernel before) and unfused (--no-fuse-rows) beside torch's variants.
#
#   bench/model/build_apps.sh target/l24 (pruned to the apps below)
#   sed 's/max_tokens = 2048/max_tokens = 4096/' examples/llama_attn_out.mlir > /tmp/attn4096.mlir
#   LAYER_NAME=attn_fused python/build_layer.sh /tmp/attn4096.mlir target/l24/py
#   LAYER_NAME=attn_staged SYMM_COMPILE_FLAGS=--lamport-max-bytes=0 python/build_layer.sh ...
#   LAYER_NAME=attn_unfused SYMM_COMPILE_FLAGS=--no-fuse-rows python/build_layer.sh ...
#   (device) bash bench/device/rows_lamport_h200x2.sh target/l24
set -uo pipefail
B=${1:?usage: rows_lamport_h200x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=10 NVSHMEM_DISABLE_NVLS=1
nvidia_libraries
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  tokens=1,16,32,33,64,128,256,2048
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 32 33 64 128 256 2048
  run timeout 120 "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=$tokens
  SYMM_CUDA_GRAPHS=0 run timeout 120 "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=$tokens
  run timeout 120 "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
  run timeout 300 "$B/symm-launch" -n 2 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/checks.log"
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
for round in 1 2; do
  for fused in fused staged; do
    NORM_TOKENS=1,16,32,48,64 timeout 200 torchrun --nproc_per_node=2 bench/model/norm_bench.py \
      "$py/libattn_$fused.so" "$py/libattn_unfused.so" 2>&1 | grep "^{" | sed "s/^{/{\"fused_kernel\": \"$fused\", /"
  done
done | tee "$OUT/norm_bench.jsonl"
