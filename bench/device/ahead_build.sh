#!/usr/bin/env bash
# Builds what ahead_h200.sh runs into DIR (issue 32, session 25; not yet run:
# the session's device time was spent). The tensor-core GEMV streams its
# weight into registers, 64 KB a block in flight; the pure read in its
# block shape reads 3.69 TB/s at that depth and 4.01 with twice as much in
# flight (bench/results/2026-11-27-l2-prefetch-size-h200.md), which the
# registers cannot hold (1024 threads spilled). --matmul-mma-gemv-ahead S
# prefetches into L2, in the loop, each warp's steps S past those its loads
# fetch: more in flight at no register's cost. Variants of the 4096/7168
# block at world size 1 (both the pair's `mma16` and the down projection's
# `mma16`/`mma16_staged` take it; the one-row GEMVs do not):
#   base    the default (no prefetch in the loop)
#   a1, a2, a4, a8   --matmul-mma-gemv-ahead 1, 2, 4, 8
# and the 8192/3584 block (a TP-8 rank of Llama-3-70B, the pair streaming
# its norm) with a4, for the checks.
#
#   WIDTHS=4096x7168 bench/device/ahead_build.sh target/ah && tar -cJf target/ah.tar.xz -C target ah
out=${1:?usage: ahead_build.sh DIR}
. "$(dirname "$0")/variant_layers.sh"
layer base "$out/src/mlp.mlir"
for s in 1 2 4 8; do
  layer "a$s" "$out/src/mlp.mlir" --matmul-mma-gemv-ahead "$s"
done
layer a4_8192x3584 "$out/src/mlp_8192x3584.mlir" --matmul-mma-gemv-ahead 4
# Their PTX, for ptxas's registers and spills on the device (ahead_h200.sh).
# With a local ptxas 12.8: 126-128 registers and no spill at 4096/7168 for
# every variant; the 8192/3584 pair (its norm streamed) spills 44 bytes at
# ahead 4 and 8 (none without).
mkdir -p "$out/ptx"
for v in base:0 a1:1 a2:2 a4:4 a8:8; do
  target/release/symm-compile "$out/src/mlp.mlir" -o "$out/src/${v%:*}.o" --emit ptx \
    --matmul-mma-gemv-ahead "${v#*:}"
  mv "$out/src/${v%:*}.ptx" "$out/ptx/"
done
target/release/symm-compile "$out/src/mlp_8192x3584.mlir" -o "$out/src/a4_8192x3584.o" --emit ptx \
  --matmul-mma-gemv-ahead 4
mv "$out/src/a4_8192x3584.ptx" "$out/ptx/"
finish
