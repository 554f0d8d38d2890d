#!/usr/bin/env bash
# Issue 32: TP 4 at prefill sizes (kind nvidia-h200-x4 or
# nvidia-h100-x4; run in session 19, bench/results/2026-11-27-tp4-prefill-h200x4.md):
# the decoder half-layer and the MLP block at
# TP 4 at prefill sizes, where the remark of symm-mem-expand-collectives
# shows the decoder's all-reduces with a row statistic (residual + next
# RMSNorm) taking the one-shot between barriers above 2 MiB (256 rows):
# on 4 ranks a one-shot reads 3 copies of a 16 MiB message over NVLink, a
# two-shot about 2 (ROWS_TWO_SHOT_MAX was measured on 2 ranks only).
# Builds: the default, and --rows-two-shot-max-bytes=16777216 (the two-shot
# up to 2048 rows; the default on 4 ranks since then, so to compare again
# build the second with --rows-two-shot-max-bytes=2097152), beside
# torch.compile + CUDA graphs, two rounds (ROUNDS, RUN_TIMEOUT per run).
#   (here)   for layer in llama_mlp llama_decoder; do
#              sed -e 's/world_size(2)/world_size(4)/' -e 's/7168/3584/g' \
#                -e 's/2048x4096xbf16/1024x4096xbf16/g' -e 's/?x2048xbf16/?x1024xbf16/g' \
#                examples/$layer.mlir > target/tp4/src/$layer.mlir
#              python/build_layer.sh target/tp4/src/$layer.mlir target/tp4/layers
#              LAYER_NAME=${layer}_r16 SYMM_COMPILE_FLAGS=--rows-two-shot-max-bytes=16777216 \
#                python/build_layer.sh target/tp4/src/$layer.mlir target/tp4/layers
#            done   (with SYMM_LIBDEVICE set, after building symm-runtime-clib in release)
#   (device) bash bench/device/tp4_prefill_x4.sh   (carry target/tp4)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=target/tp4/layers
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-256,512,1024,2048}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in ${ROUNDS:-1 2}; do
  for layer in mlp decoder; do
    bench=bench/model/layer_bench.py
    [ $layer = decoder ] && bench=bench/model/decoder_bench.py
    run timeout ${RUN_TIMEOUT:-280} torchrun --nproc_per_node=4 $bench $L/libllama_$layer.so \
      r16=$L/libllama_${layer}_r16.so > "$OUT/${layer}_tp4_prefill_$round.log" 2>&1
    bench_columns "$layer round $round" "$OUT/${layer}_tp4_prefill_$round.log" symm_us symm_r16_us \
      torch_compile_best_us
  done
done
