#!/usr/bin/env bash
# Issue 32, session 10, on 2 GPUs in one device call: the floor
# (bench/floor/stream_read.cu), then HEAD's MLP block and decoder half-layer
# beside torch's variants and torch.compile (Inductor) + CUDA graphs at
# 1, 16, 128 and 2048 tokens (LAYER_TOKENS), two rounds.
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/x2h/layers (and llama_decoder)
#   (device) bash bench/device/final_x2.sh target/x2h   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: final_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
floor_read 2>&1 | tee "$OUT/floor.log"
export SYMM_RUNTIME_LIB=$NEW/layers/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,16,128,2048}
for round in 1 2; do
  run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py "$NEW/layers/libllama_mlp.so" \
    2>&1 | tee "$OUT/layer_bench_$round.log"
  run timeout 280 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$NEW/layers/libllama_decoder.so" \
    2>&1 | tee "$OUT/decoder_bench_$round.log"
done
