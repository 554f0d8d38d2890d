#!/usr/bin/env bash
# Builds the shipped examples for H100/H200 (--chip sm_90a: the short-grid
# wgmma GEMV for o_proj) into DIR, as replay_launches_x2.sh and
# layers_beside_x2 (lib.sh) take them, with the sm_90 build of the two
# layers beside as the variant _sm90 (2026-11-28-short-grid-wgmma-h200x2.md):
#   DIR/layers/libllama_{mlp,decoder}.so        sm_90a, for the layer benches
#   DIR/layers/libllama_{mlp,decoder}_sm90.so   sm_90 (the build before)
#   DIR/layers/libmlp_4096x7168.so, DIR/llama_{mlp,decoder}_w2, symm-launch,
#   symm-gpu-tests                              sm_90a (matmul_build.sh)
#   bench/device/hopper_build.sh target/s31 && tar -cJf target/s31.tar.xz -C target s31
#   (device) tar -xJf target/s31.tar.xz -C target && WAYS=measured ROUNDS="1 2" \
#              bash bench/device/replay_launches_x2.sh target/s31
#   (or, both builds in each process) . bench/device/lib.sh && layers_beside_x2 target/s31 sm90
set -euo pipefail
out=${1:?usage: hopper_build.sh DIR}
cd "$(dirname "$0")/../.."
WIDTHS=${WIDTHS:-4096x7168} LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh "$out"
rm -f "$out"/llama_*_w1
for layer in llama_mlp llama_decoder; do
  SYMM_COMPILE_FLAGS="--chip sm_90a" python/build_layer.sh "examples/$layer.mlir" "$out/layers" > /dev/null
  LAYER_NAME=${layer}_sm90 python/build_layer.sh "examples/$layer.mlir" "$out/layers" > /dev/null
done
rm -f "$out"/layers/*.h
strip "$out"/layers/*.so
du -sh "$out"
