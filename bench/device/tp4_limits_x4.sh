#!/usr/bin/env bash
# Issue 32, session 18, 4x H200 (TP 4): the MLP block and the decoder
# half-layer with the one-shot limits as they are (1 MiB one-shot, Lamport up
# to 1 MiB) against builds with a 512 KiB or 256 KiB one-shot limit (larger
# messages take the two-shot) and with the Lamport kernel only up to 512 KiB
# (the barrier one-shot above, as before session 17), all in one process per
# bench beside torch.compile + CUDA graphs, at 64, 96 and 128 tokens.
#   (here)   the TP-4 layers in target/tp4/layers: examples/llama_{mlp,decoder}.mlir
#            with world_size(4), F/4 = 3584 and attention features 1024 per rank,
#            built by python/build_layer.sh (LAYER_NAME=..._os512 etc. with
#            SYMM_COMPILE_FLAGS=--one-shot-max-bytes=524288, ...=262144,
#            --lamport-max-bytes=524288)
#   (device) bash bench/device/tp4_limits_x4.sh   (kind nvidia-h200-x4)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=target/tp4/layers
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-64,96,128}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for layer in mlp decoder; do
  bench=bench/model/layer_bench.py
  [ $layer = decoder ] && bench=bench/model/decoder_bench.py
  run timeout 200 torchrun --nproc_per_node=4 $bench $L/libllama_$layer.so \
    os512=$L/libllama_${layer}_os512.so os256=$L/libllama_${layer}_os256.so \
    lm512=$L/libllama_${layer}_lm512.so > "$OUT/${layer}_tp4_limits.log" 2>&1
  bench_columns "$layer" "$OUT/${layer}_tp4_limits.log" symm_us symm_os512_us symm_os256_us symm_lm512_us \
    torch_compile_best_us
done
