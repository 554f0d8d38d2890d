#!/usr/bin/env bash
# The MLP block on 2x H200, one device call: layer_bench.py with ours also
# captured into torch's CUDA graphs (symm_cg), twice, then layer_profile.py
# (wall time, idle time and kernels per call, eager and in graphs).
#
#   python/build_layer.sh examples/llama_mlp.mlir target/l20/py
#   (device) bash bench/device/layer_graph_h200x2.sh target/l20
set -uo pipefail
B=${1:?usage: layer_graph_h200x2.sh BUILD_DIR}
OUT=${OUT:-/tmp}
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 SYMM_TIMEOUT_S=10
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
for round in 1 2; do
  LAYER_TOKENS=${LAYER_TOKENS:-1,16,128,2048} timeout 300 torchrun --nproc_per_node=2 \
    bench/model/layer_bench.py "$py/libllama_mlp.so" 2>&1 | grep -v Warning
done | tee "$OUT/layer_bench.jsonl"
timeout 200 torchrun --nproc_per_node=2 bench/model/layer_profile.py "$py/libllama_mlp.so" 2>&1 \
  | grep -v Warning | tee "$OUT/layer_profile.log"
