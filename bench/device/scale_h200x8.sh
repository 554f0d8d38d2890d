#!/usr/bin/env bash
# Issue 18 on nvidia-h200-x8, one device call: the runtime's GPU tests on 8
# ranks and a dead peer; the runtime's and the compiled all-reduce (128 B to
# 32 MB, eager and in graphs) beside torch's symm_mem and NCCL anchors and
# NCCL's symmetric kernels; all-gather + matmul beside its anchor (the
# seeds' shapes); the Llama MLP block at tensor-parallel 8 beside torch's
# variants, twice.
#
#   bench/device/scale_build_x8.sh target/x8
#   (device) bash bench/device/scale_h200x8.sh target/x8
set -uo pipefail
B=${1:?usage: scale_h200x8.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=10 NVSHMEM_DISABLE_NVLS=1
nvidia_libraries
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m; } \
  2>&1 | tee "$OUT/machine.txt"
{
  run timeout 300 "$B/symm-launch" -n 8 "$B/symm-gpu-tests"
  echo "== a peer dies (rank 1 leaves; the staged and the Lamport one-shot time out on the others)"
  RANKS=8 SYMM_TIMEOUT_S=5 ranks timeout 60 "$B/symm-gpu-tests" dead-peer
} 2>&1 | tee "$OUT/checks.log"
for round in 1 2; do
  timeout 200 "$B/symm-launch" -n 8 "$B/symm-allreduce-bench" 2>&1 | sed -n 's/^\[rank 0\] /symm /p'
  timeout 200 "$B/symm-launch" -n 8 "$B/compiled_ar_w8" 2>&1 | sed -n 's/^\[rank 0\] /compiled /p'
  timeout 200 torchrun --nproc_per_node=8 "$B/anchors/torch_allreduce_bench.py" 2>/dev/null | sed "s/^/torch /"
  timeout 200 torchrun --nproc_per_node=8 "$B/anchors/torch_nccl_symm_bench.py" 2>/dev/null | sed "s/^/nccl_symm /"
done | tee "$OUT/allreduce.jsonl"
{
  timeout 300 "$B/symm-launch" -n 8 "$B/symm-agmm-bench" 2>&1 | sed -n 's/^\[rank 0\] /symm /p'
  timeout 300 torchrun --nproc_per_node=8 "$B/anchors/torch_agmm_bench.py" 2>/dev/null | sed "s/^/torch /"
} | tee "$OUT/agmm.log"
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
for round in 1 2; do
  LAYER_TOKENS=1,16,128,2048 timeout 400 torchrun --nproc_per_node=8 bench/model/layer_bench.py \
    "$py/libllama_mlp_w8.so" 2>&1 | grep "^{"
done | tee "$OUT/layer_bench.jsonl"
