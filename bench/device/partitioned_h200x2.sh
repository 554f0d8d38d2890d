#!/usr/bin/env bash
# Issue 15 on 2x H200, one device call: examples/partitioned.mlir (two MLP
# blocks, a host step between: two CUDA-graph partitions and a fallback
# region) against torch's f32 references for 120 calls with changing
# inputs on both ranks, with partition graphs and fully eager
# (SYMM_CUDA_GRAPHS=0); then the layers whose whole body is one partition
# (llama_mlp, llama_attn_out, tp_mlp), the runtime GPU tests, and the MLP
# block beside torch (bench/model/layer_bench.py).
#
#   bench/model/build_apps.sh target/l15 && python/build_layer.sh examples/llama_mlp.mlir target/l15/py
#   (device) bash bench/device/partitioned_h200x2.sh target/l15
set -uo pipefail
B=${1:?usage: partitioned_h200x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 128 2048 --partitioned
  run "$B/symm-launch" -n 2 "$B/partitioned" /tmp/ref
  SYMM_CUDA_GRAPHS=0 run "$B/symm-launch" -n 2 "$B/partitioned" /tmp/ref
  run "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=1,16,128,2048
  run "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=1,16,128,2048
  run "$B/symm-launch" -n 2 "$B/tp_mlp"
  run "$B/symm-launch" -n 2 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/checks.log"
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
LAYER_TOKENS=1,16,128,2048 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
  "$py/libllama_mlp.so" 2>&1 | grep -v Warning | tee "$OUT/layer_bench.jsonl"
