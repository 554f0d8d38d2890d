#!/usr/bin/env bash
# Issue 32, session 6: the all-reduce kernels loading their epilogue's
# operands (the residual) before the exchange with the peers, against the
# build before (the held-row GEMV, 48eb61b), on 2 GPUs in one process
# each (layer_bench.py and decoder_bench.py take the second build as an
# extra layer, so both run beside the same torch anchors).
#
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/x2c/layers (and llama_decoder)
#   (device) bash bench/device/epilogue_ab_x2.sh target/x2c target/x2b   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: epilogue_ab_x2.sh NEW_BUILD OLD_BUILD}
OLD=${2:?usage: epilogue_ab_x2.sh NEW_BUILD OLD_BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_RUNTIME_LIB=$NEW/layers/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,4,16}
for round in 1 2; do
  run timeout 300 torchrun --nproc_per_node=2 bench/model/layer_bench.py "$NEW/layers/libllama_mlp.so" \
    "old=$OLD/layers/libllama_mlp.so" 2>&1 | tee "$OUT/layer_bench_$round.log"
  run timeout 300 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$NEW/layers/libllama_decoder.so" \
    "old=$OLD/layers/libllama_decoder.so" 2>&1 | tee "$OUT/decoder_bench_$round.log"
done
