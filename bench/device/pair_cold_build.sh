#!/usr/bin/env bash
# Builds what pair_cold_h200.sh runs into DIR (issue 32, session 26): the
# 4096/7168 block at world size 1 with the tensor-core GEMVs' tilings
# (--matmul-mma-gemv COLUMNS,K_GROUPS,UNROLL; the pair's default is
# 64,8,2). Sessions 10-13 chose the default on benches that read the same
# weights every call; with 3 weight copies in turn the pair at 16 rows
# reads 117 MB in 31.8-31.9 µs instead of 30.4 (3.68 TB/s; cuBLAS's
# concatenated GEMM 30.4 either way: 2026-11-28-weight-copies-h200x2.md).
# Is another tiling the faster one on cold weights?
#   WIDTHS=4096x7168 bench/device/pair_cold_build.sh target/pc && tar -cJf target/pc.tar.xz -C target pc
out=${1:?usage: pair_cold_build.sh DIR}
. "$(dirname "$0")/variant_layers.sh"
layer base "$out/src/mlp.mlir"
for tiling in ${PAIR_TILINGS:-64,8,3 64,8,4 64,12,2 64,16,2 64,4,4 128,8,2 64,6,3 128,4,3}; do
  layer "t${tiling//,/_}" "$out/src/mlp.mlir" --matmul-mma-gemv "$tiling"
done
mkdir -p "$out/ptx"
for tiling in ${PAIR_TILINGS:-64,8,3 64,8,4 64,12,2 64,16,2 64,4,4 128,8,2 64,6,3 128,4,3}; do
  target/release/symm-compile "$out/src/mlp.mlir" -o "$out/src/p.o" --emit ptx --matmul-mma-gemv "$tiling"
  mv "$out/src/p.ptx" "$out/ptx/t${tiling//,/_}.ptx"
done
finish
