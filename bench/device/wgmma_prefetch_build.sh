#!/usr/bin/env bash
# Builds what wgmma_prefetch_h200.sh runs into DIR (issue 32, session 25).
# On one H200 the 16-row wgmma GEMV read the down projection alone at
# 3.69 TB/s (15.9 µs, cuBLAS 16.8, mma16_staged 19.3), yet the block ran
# 1.5 µs slower with it than with mma16_staged (down_split_h200.sh). Launched
# early behind the pair, mma16_staged first prefetches 8 steps of each
# warp into L2 (256 KB a block); the wgmma GEMV prefetched one line a
# thread (160 rows, 20 KB). Variants of the 4096/7168 block at world size 1:
#   base     the default (sm_90, mma16_staged)
#   a90      --chip sm_90a, no wgmma (the same kernels for another target)
#   wg       the 16-row wgmma GEMV (prefetch 160 rows, its default)
#   wgp1k    the same, 1024 rows prefetched (128 KB a block)
#   wgp2k    2048 rows (256 KB a block, as mma16_staged)
#   wgpall   3584 rows (a whole split-K slice)
#   wgne     wg with the weight's copies not evict-first
#   wgp1kne  wgp1k the same
# (The pair ran 1.6-2 µs slower behind `wg` than behind `base`, programmatic
# launch on or off, but not behind wgp1k-wgpall: the second call asks
# whether the evict-first policy of the down projection's weight does it.)
#
#   WIDTHS=4096x7168 bench/device/wgmma_prefetch_build.sh target/wp && tar -cJf target/wp.tar.xz -C target wp
out=${1:?usage: wgmma_prefetch_build.sh DIR}
. "$(dirname "$0")/variant_layers.sh"
wg="--chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few"
layer base "$out/src/mlp.mlir"
layer a90 "$out/src/mlp.mlir" --chip sm_90a
# shellcheck disable=SC2086 # the flags are words
{
  layer wg "$out/src/mlp.mlir" $wg
  layer wgp1k "$out/src/mlp.mlir" $wg --matmul-wgmma-gemv-prefetch 1024
  layer wgp2k "$out/src/mlp.mlir" $wg --matmul-wgmma-gemv-prefetch 2048
  layer wgpall "$out/src/mlp.mlir" $wg --matmul-wgmma-gemv-prefetch 3584
  layer wgne "$out/src/mlp.mlir" $wg --no-matmul-wgmma-gemv-evict-first
  layer wgp1kne "$out/src/mlp.mlir" $wg --matmul-wgmma-gemv-prefetch 1024 --no-matmul-wgmma-gemv-evict-first
}
finish
