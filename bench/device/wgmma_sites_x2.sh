#!/usr/bin/env bash
# Issue 32, session 17, on 2 GPUs in one device call: session 16's A/B of
# the wgmma GEMV (`--chip sm_90a --matmul-wgmma-gemv`) against the same
# chip without it (`nowg`), again now that the two builds' measured choices
# are apart (the site id covers the generated kernels): the MLP block at
# TP 2, LAYER_TOKENS (default 16, 64, 128), two rounds, SYMM_LOG=info for
# each build's choices, beside torch.compile (Inductor) + CUDA graphs.
#   (here)   SYMM_COMPILE_FLAGS="--chip sm_90a --matmul-wgmma-gemv" \
#              python/build_layer.sh examples/llama_mlp.mlir target/wx/layers
#            LAYER_NAME=llama_mlp_nowg SYMM_COMPILE_FLAGS="--chip sm_90a" \
#              python/build_layer.sh examples/llama_mlp.mlir target/wx/layers
#   (device) bash bench/device/wgmma_sites_x2.sh target/wx   (kind nvidia-h200-x2)
set -uo pipefail
B=${1:?usage: wgmma_sites_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=$B/layers
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-16,64,128}
for round in 1 2; do
  SYMM_LOG=info run timeout 250 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$L/libllama_mlp.so" "nowg=$L/libllama_mlp_nowg.so" 2>&1 | tee "$OUT/wgmma_sites_$round.log"
done
