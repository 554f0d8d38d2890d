#!/usr/bin/env bash
# Builds, into DIR/layers, what eight_rows_x2.sh runs on 2x H200: HEAD's
# Llama MLP block and decoder half-layer at TP 2 for sm_90a (the shipped
# examples), and the same without the wgmma rings' 8-row kernels
# (`_no8`: --no-matmul-wgmma-gemv-eight-rows).
#   bench/device/eight_rows_x2_build.sh target/x8
#   (device, kind nvidia-h200-x2) bash bench/device/eight_rows_x2.sh target/x8
out=${1:?usage: eight_rows_x2_build.sh DIR}
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q --release -p symm-compile -p symm-runtime-clib
for l in llama_mlp llama_decoder; do
  SYMM_COMPILE_FLAGS="--chip sm_90a" python/build_layer.sh "examples/$l.mlir" "$out/layers"
  LAYER_NAME=${l}_no8 SYMM_COMPILE_FLAGS="--chip sm_90a --no-matmul-wgmma-gemv-eight-rows" \
    python/build_layer.sh "examples/$l.mlir" "$out/layers"
done
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
