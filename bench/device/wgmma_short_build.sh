#!/usr/bin/env bash
# Builds what wgmma_short_h200.sh runs into DIR (issue 32, session 30): the
# short-grid wgmma GEMV as committed (on for --chip sm_90a, SHORT_GRID_BLOCKS).
#   DIR/layers/libdec_*.so           --chip sm_90a: the decoder half-layer at
#       world size 1 at TP 2/4/8's widths of Llama-3-8B (4096x{2048x7168,
#       1024x3584,512x1792}), a hidden size 5120 with 1280/1728 a rank (o_proj
#       of 80 short blocks; MLP 1728 not a multiple of 128), and 2064x1040x1000
#       (o_proj K = 1040, no whole number of the ring's 128-row stages; N =
#       2064, a partial column tile); TP 2, 4 and 8 builds of each
#       (dec_tp<W>_...); the C++ apps at TP 2
#   DIR/layers/libdec_*_sm90.so      the three Llama widths at world size 1
#       for the default chip (sm_90: no wgmma), the build before
#   bench/device/wgmma_short_build.sh target/s30c && tar -cJf target/s30c.tar.xz -C target s30c
set -euo pipefail
out=${1:?usage: wgmma_short_build.sh DIR}
cd "$(dirname "$0")/../.."
WIDTHS=" " TP_WORLDS="2 4 8" LAYER_FLAGS="--chip sm_90a" \
  DECODER_WIDTHS="4096x2048x7168 4096x1024x3584 4096x512x1792 5120x1280x1728 2064x1040x1000" \
  bench/device/matmul_build.sh "$out"
WIDTHS=" " DECODER_WIDTHS="4096x2048x7168 4096x1024x3584 4096x512x1792" bench/device/matmul_build.sh "$out/sm90"
for lib in "$out"/sm90/layers/libdec_*.so; do
  mv "$lib" "$out/layers/$(basename "$lib" .so)_sm90.so"
done
rm -rf "$out/sm90" "$out"/llama_*_w1
du -sh "$out"
