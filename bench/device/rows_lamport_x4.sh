#!/usr/bin/env bash
# The rows kernels' Lamport bound on 4 ranks (kind nvidia-h200-x4 or
# nvidia-h100-x4): on more than 2 ranks a rows one-shot runs up to 512 KiB,
# so the 1 MiB bound moves 33-64 rows of 4096 bf16 from the staged to the
# Lamport kernel. The TP-4 decoder half-layer as committed beside a build
# with the old bound (--rows-lamport-max-bytes=262144), one process, two
# rounds, torch.compile's two-shot beside them.
#   (here)   sed -e 's/world_size(2)/world_size(4)/' -e 's/7168/3584/g' -e 's/2048x4096xbf16/1024x4096xbf16/g' \
#              -e 's/?x2048xbf16/?x1024xbf16/g' examples/llama_decoder.mlir > target/t4/src/llama_decoder.mlir,
#            python/build_layer.sh it into target/t4/layers, again as LAYER_NAME=llama_decoder_rl256
#            SYMM_COMPILE_FLAGS=--rows-lamport-max-bytes=262144
#   (device) tar -xJf target/t4.tar.xz -C target && bash bench/device/rows_lamport_x4.sh target/t4
set -uo pipefail
B=${1:?usage: rows_lamport_x4.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
for round in 1 2; do
  TORCH_VARIANTS=two_shot LAYER_TOKENS=${LAYER_TOKENS:-16,33,64} run timeout 250 \
    torchrun --nproc_per_node=4 bench/model/decoder_bench.py "$L/libllama_decoder.so" \
    rl256="$L/libllama_decoder_rl256.so" 2>&1 | grep -v Warning > "$OUT/decoder_tp4_$round.log"
  bench_columns "round $round" "$OUT/decoder_tp4_$round.log" symm_us symm_rl256_us symm_cg_us \
    symm_rl256_cg_us torch_compile_best_us
done
