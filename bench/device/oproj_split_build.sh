#!/usr/bin/env bash
# Builds what oproj_split_x2.sh runs into DIR (issue 32, session 27): the
# decoder half-layer with its output projection split over K or not.
# symm-mem-split-k splits a matmul that only an all-reduce reads from
# K = 3072 up (min-k, from a sweep of cuBLAS's split against cuBLAS's own,
# 2026-11-23, before the generated GEMVs). The generated GEMVs run a block
# per 64 columns and slice: TP 2's o_proj (K = 2048, N = 4096) gets 64
# blocks on an H200's 132 SMs, and at 16 rows its kernel takes 10.2 µs
# where cuBLAS takes 7.1 (2026-11-28-weight-copies-h200x2.md).
#   DIR          matmul_build.sh with the decoder at world size 1 at TP 2, 4
#                and 8's widths (dec_4096x{2048x7168,1024x3584,512x1792})
#   DIR/layers/libdec_*_k512.so, DIR/llama_decoder_w2_k512  the same decoders
#                with --split-k-min-k 512 (every o_proj and down projection
#                split in two)
#   DIR/layers/libllama_decoder{,_k2048}.so  the shipped TP-2 example, as is
#                and with --split-k-min-k 2048, for decoder_bench.py
#   bench/device/oproj_split_build.sh target/s27 && tar -cJf target/s27.tar.xz -C target s27
set -euo pipefail
out=${1:?usage: oproj_split_build.sh DIR}
cd "$(dirname "$0")/../.."
export WIDTHS=4096x7168 DECODER_WIDTHS="4096x2048x7168 4096x1024x3584 4096x512x1792"
bench/device/matmul_build.sh "$out"
LAYER_FLAGS="--split-k-min-k 512" bench/device/matmul_build.sh "$out/k512"
for lib in "$out"/k512/layers/libdec_*.so; do
  name=$(basename "$lib" .so)
  mv "$lib" "$out/layers/${name}_k512.so"
done
mv "$out/k512/llama_decoder_w2" "$out/llama_decoder_w2_k512"
rm -rf "$out/k512"
python/build_layer.sh examples/llama_decoder.mlir "$out/layers"
LAYER_NAME=llama_decoder_k2048 SYMM_COMPILE_FLAGS="--split-k-min-k 2048" \
  python/build_layer.sh examples/llama_decoder.mlir "$out/layers"
rm -f "$out"/layers/*.h "$out"/layers/*.json.tmp
strip "$out"/layers/*.so
du -sh "$out"
