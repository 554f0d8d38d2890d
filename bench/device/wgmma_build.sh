#!/usr/bin/env bash
# Builds what wgmma_h200.sh runs into DIR (issue 32, session 16: the
# single matmuls' GEMV on the warpgroup tensor cores, `wgmma`, for calls of
# 17-128 rows on sm_90a): everything matmul_build.sh builds, for
# --chip sm_90a --matmul-wgmma-gemv, plus at world size 1 the 4096/7168
# block
#   - without the wgmma GEMV (`nowg`, the default),
#   - with it for calls of 2-16 rows too (`few`).
#
#   bench/device/wgmma_build.sh target/wg && tar -cJf target/wg.tar.xz -C target wg
out=${1:?usage: wgmma_build.sh DIR}
export LAYER_FLAGS="--chip sm_90a --matmul-wgmma-gemv ${LAYER_FLAGS:-}"
. "$(dirname "$0")/variant_layers.sh"
layer nowg "$out/src/mlp.mlir" --chip sm_90a
layer few "$out/src/mlp.mlir" --chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few
finish
