#!/usr/bin/env bash
# Builds what wgmma_few_h200.sh runs into DIR (issue 32, session 30): the
# MLP block (4096/7168) and the decoder half-layer at TP 2, 4 and 8's widths
# at world size 1, and the C++ apps, as is and with the single matmuls'
# 16-row wgmma GEMV of an 8-stage ring (_wg8):
#   --chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few
#   --matmul-wgmma-gemv-max-rows 16 --matmul-wgmma-gemv-stages 8
# (oproj_tile_h200.sh: the decoder's o_proj at 16 rows 6.5 µs against 10.1
# for mma16 and 6.7 for cuBLAS).
#   bench/device/wgmma_few_build.sh target/s30b && tar -cJf target/s30b.tar.xz -C target s30b
set -euo pipefail
out=${1:?usage: wgmma_few_build.sh DIR}
cd "$(dirname "$0")/../.."
export WIDTHS=4096x7168 DECODER_WIDTHS="4096x2048x7168 4096x1024x3584 4096x512x1792"
bench/device/matmul_build.sh "$out"
LAYER_FLAGS="--chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few --matmul-wgmma-gemv-max-rows 16 --matmul-wgmma-gemv-stages 8" \
  bench/device/matmul_build.sh "$out/wg8"
for lib in "$out"/wg8/layers/lib{mlp,dec}_*.so; do
  mv "$lib" "$out/layers/$(basename "$lib" .so)_wg8.so"
done
for app in "$out"/wg8/llama_*; do
  mv "$app" "$out/$(basename "$app")_wg8"
done
rm -rf "$out/wg8" "$out"/llama_*_w1*
du -sh "$out"
