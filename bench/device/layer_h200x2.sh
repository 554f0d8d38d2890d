#!/usr/bin/env bash
# Issue 14 on 2x H200, one device call: the compiled Llama layers against
# f32 torch references (vectorized element-wise kernels, the gate+up pair
# GEMM, the folded statistic fill), the runtime GPU tests, then the MLP
# block beside torch's variants (bench/model/layer_bench.py; a second build
# whose 16 MB all-reduce takes the two-shot) and its per-kernel profile.
#
#   bench/model/build_apps.sh target/l14
#   python/build_layer.sh examples/llama_mlp.mlir target/l14/py
#   LAYER_NAME=llama_mlp_push SYMM_COMPILE_FLAGS=--two-rank-push-max-bytes=67108864 \
#     python/build_layer.sh examples/llama_mlp.mlir target/l14/py
#   (device) bash bench/device/layer_h200x2.sh target/l14
set -uo pipefail
B=${1:?usage: layer_h200x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvidia_libraries
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  tokens=1,16,128,256,2048
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 128 256 2048
  run "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
  run "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=$tokens
  run "$B/symm-launch" -n 2 "$B/tp_mlp"
  [ -x "$B/row_ops" ] && run "$B/symm-launch" -n 1 "$B/row_ops"
  run "$B/symm-launch" -n 2 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/checks.log"
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
others=()
[ -f "$py/libllama_mlp_push.so" ] && others+=("push=$py/libllama_mlp_push.so")
for round in 1 2; do
  LAYER_TOKENS=1,16,128,256,2048 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$py/libllama_mlp.so" "${others[@]}" 2>&1 | grep -v Warning
done | tee "$OUT/layer_bench.jsonl"
torchrun --nproc_per_node=2 bench/model/layer_profile.py "$py/libllama_mlp.so" 2>&1 \
  | grep -v Warning | tee "$OUT/layer_profile.log"
