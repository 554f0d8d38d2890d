#!/usr/bin/env bash
# Issue 14's Lamport one-shot on 2x H200, one device call: the Llama layers
# against torch's f32 references (their 8 KB and 128 KB all-reduces now
# take the Lamport kernel), the runtime GPU tests, then the compiled
# all-reduce (Lamport by default against --lamport-max-bytes=0, the staged
# one-shot) beside torch's anchor, then the MLP block with and without it
# beside torch's variants.
#
#   bench/model/build_apps.sh target/l17
#   (ar) python3 bench/compiled/gen_allreduce.py > ar.mlir; symm-compile ar.mlir
#        [--lamport-max-bytes=0]; link allreduce_bench.cpp -DALGORITHM=lamport|staged
#        as target/l17/compiled_ar_{lamport,staged}
#   python/build_layer.sh examples/llama_mlp.mlir target/l17/py
#   LAYER_NAME=llama_mlp_nolamport SYMM_COMPILE_FLAGS=--lamport-max-bytes=0 \
#     python/build_layer.sh examples/llama_mlp.mlir target/l17/py
#   cp -r ../shared/anchors target/l17/
#   (device) bash bench/device/lamport_h200x2.sh target/l17
set -uo pipefail
B=${1:?usage: lamport_h200x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvidia_libraries
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  tokens=1,16,128,256,2048
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 128 256 2048
  run "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
  SYMM_CUDA_GRAPHS=0 run "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
  run "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=$tokens
  run "$B/symm-launch" -n 2 "$B/tp_mlp"
  run "$B/symm-launch" -n 2 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/checks.log"
for round in 1 2; do
  for v in lamport staged; do
    "$B/symm-launch" -n 2 "$B/compiled_ar_$v" 2>&1 | sed "s/^/$v /"
  done
  torchrun --nproc_per_node=2 "$B/anchors/torch_allreduce_bench.py" 2>/dev/null \
    | sed "s/^/torch /"
done | tee "$OUT/allreduce.jsonl"
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
for round in 1 2; do
  LAYER_TOKENS=1,16,128 torchrun --nproc_per_node=2 bench/model/layer_bench.py "$py/libllama_mlp.so" \
    "nolamport=$py/libllama_mlp_nolamport.so" 2>&1 | grep -v Warning
done | tee "$OUT/layer_bench.jsonl"
