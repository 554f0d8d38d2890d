#!/usr/bin/env bash
# Builds what down_split_h200.sh runs into DIR (issue 32, session 25: the
# down projection at 16 rows, the one generated matmul that reads its
# weight slower than cuBLAS alone). `mma16_staged` runs 128 blocks of 16
# warps (64 columns x 2 split-K slices), one block an SM by registers; the
# pure read in that shape stops near 3.2-3.5 TB/s, and only more, shorter
# blocks an SM read faster (bench/results/2026-11-27-fused-mlp-probe-h200.md).
# Sessions 6 and 17 tried 4 and 8 slices with the default 16 warps a
# block: two waves, slower. These variants keep one wave with fewer warps
# a block (--matmul-mma-gemv sets both kinds; the pair's default is
# 64,8,2, so only its unroll differs where a variant sets one):
#   base       the default (2 slices, single 64,16,2)
#   s2k8       2 slices, 64,8,2 (128 blocks of 8 warps: a control)
#   s4k8       4 slices, 64,8,2 (256 blocks of 8 warps, 2 an SM)
#   s4k8u3     4 slices, 64,8,3
#   s8k4       8 slices, 64,4,2 (512 blocks of 4 warps, 4 an SM)
#   s8k4u4     8 slices, 64,4,4
#   wg16       sm_90a, the 16-row wgmma GEMV for 2-16 rows (opt-in today)
#
#   WIDTHS=4096x7168 bench/device/down_split_build.sh target/ds && tar -cJf target/ds.tar.xz -C target ds
out=${1:?usage: down_split_build.sh DIR}
. "$(dirname "$0")/variant_layers.sh"
layer base "$out/src/mlp.mlir"
layer s2k8 "$out/src/mlp.mlir" --matmul-mma-gemv 64,8,2
layer s4k8 "$out/src/mlp.mlir" --split-k-slices 4 --matmul-mma-gemv 64,8,2
layer s4k8u3 "$out/src/mlp.mlir" --split-k-slices 4 --matmul-mma-gemv 64,8,3
layer s8k4 "$out/src/mlp.mlir" --split-k-slices 8 --matmul-mma-gemv 64,4,2
layer s8k4u4 "$out/src/mlp.mlir" --split-k-slices 8 --matmul-mma-gemv 64,4,4
layer wg16 "$out/src/mlp.mlir" --chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few
# The down projection's kernels as PTX, for ptxas -v (registers, spills) on the device.
mkdir -p "$out/ptx"
for v in "s4k8 --split-k-slices 4 --matmul-mma-gemv 64,8,2" "s4k8u3 --split-k-slices 4 --matmul-mma-gemv 64,8,3" \
  "s8k4 --split-k-slices 8 --matmul-mma-gemv 64,4,2" "s8k4u4 --split-k-slices 8 --matmul-mma-gemv 64,4,4" "base"; do
  set -- $v
  name=$1
  shift
  target/release/symm-compile "$out/src/mlp.mlir" -o "$out/src/$name.o" --emit ptx "$@"
  mv "$out/src/$name.ptx" "$out/ptx/"
done
finish
