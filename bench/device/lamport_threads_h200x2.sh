#!/usr/bin/env bash
# The Lamport one-shot's block size on 2x H200, one device call: the
# compiled all-reduce (bench/compiled) built with LAMPORT_THREADS = 128, 256
# and 512 beside torch's anchor, two rounds, then the MLP block with 128
# (the default) and 512 beside torch's variants.
#
#   python3 bench/compiled/gen_allreduce.py > target/l22/ar.mlir; for each T,
#   with LAMPORT_THREADS = T: symm-compile it and link allreduce_bench.cpp
#   -DALGORITHM=lamport_tT as target/l22/compiled_ar_tT; the layer with 512
#   as LAYER_NAME=llama_mlp_t512, with 128 as llama_mlp (python/build_layer.sh
#   ... target/l22/py); cp -r ../shared/anchors target/l22/
#   (device) bash bench/device/lamport_threads_h200x2.sh target/l22
set -uo pipefail
B=${1:?usage: lamport_threads_h200x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=10 NVSHMEM_DISABLE_NVLS=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; } | tee "$OUT/machine.txt"
for round in 1 2; do
  for t in 128 256 512; do
    timeout 120 "$B/symm-launch" -n 2 "$B/compiled_ar_t$t" 2>&1 | sed "s/^/t$t /"
  done
  timeout 120 torchrun --nproc_per_node=2 "$B/anchors/torch_allreduce_bench.py" 2>/dev/null \
    | sed "s/^/torch /"
done | tee "$OUT/allreduce.jsonl"
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
for round in 1 2; do
  LAYER_TOKENS=1,16,128 timeout 200 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$py/libllama_mlp.so" "t512=$py/libllama_mlp_t512.so" 2>&1 | grep "^{"
done | tee "$OUT/layer_bench.jsonl"
