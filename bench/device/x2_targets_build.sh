#!/usr/bin/env bash
# Builds, into DIR/layers, what x2_targets.sh runs on 2x H200: HEAD's Llama
# MLP block and decoder half-layer at TP 2 for sm_90a (the shipped
# examples), and the same with symm-compile VARIANT_FLAGS as
# lib<layer>_<VARIANT>.so. By default VARIANT=nocl, no wgmma clusters
# (--matmul-wgmma-gemv-cluster 1; session 45). Session 44's was no8:
#   VARIANT=no8 VARIANT_FLAGS=--no-matmul-wgmma-gemv-eight-rows
#   bench/device/x2_targets_build.sh target/x8
#   (device, kind nvidia-h200-x2) VARIANT=nocl bash bench/device/x2_targets.sh target/x8
out=${1:?usage: x2_targets_build.sh DIR}
variant=${VARIANT:-nocl} flags=${VARIANT_FLAGS:---matmul-wgmma-gemv-cluster 1}
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q --release -p symm-compile -p symm-runtime-clib
for l in llama_mlp llama_decoder; do
  SYMM_COMPILE_FLAGS="--chip sm_90a" python/build_layer.sh "examples/$l.mlir" "$out/layers"
  LAYER_NAME=${l}_$variant SYMM_COMPILE_FLAGS="--chip sm_90a $flags" \
    python/build_layer.sh "examples/$l.mlir" "$out/layers"
done
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
