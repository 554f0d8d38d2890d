#!/usr/bin/env bash
# Issue 32, session 36: is the down projection's split over K (summed by the
# Lamport one-shot) worth it at 65-128 rows on 2 ranks? symm-mem-split-k's
# max-rows (128) came from one H200 at world size 1 (2026-11-23-split-k-*),
# where summing the slices costs the all-reduce no NVLink bytes. At 128 rows
# on 2x H200 the split Lamport kernel took 12.6 us beside cuBLAS's split
# GEMM (18.9), and torch.compile's whole GEMM took 20.8
# (2026-11-28-session24-h200x2/profile_mlp.log). Builds the TP-2 MLP
# block at WIDTHS as matmul_build.sh does, and beside each
# libmlp_tp2_<w>_k64.so (--split-k-max-rows 64: 65-128 rows run the whole
# matmul before the plain Lamport one-shot) and _k0 (never split):
#   (here)   bench/device/split_rows_build.sh target/sr
#   (device, 2x H200) VARIANTS="k64 k0" LAYER_TOKENS=32,64,65,96,128 \
#              WIDTHS="4096,14336 5120,13824 3584,18944" bash bench/device/widths_x2.sh target/sr
#   (device, one GPU: the variants against torch's f32 reference, ranks sharing it)
#              bash bench/device/split_rows_checks.sh target/sr
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: split_rows_build.sh DIR}
SPLIT_WIDTHS=${SPLIT_WIDTHS:-"4096x7168 5120x6912 3584x9472"}
WIDTHS="$SPLIT_WIDTHS" TP_WORLDS=2 LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh "$out"
rm -f "$out"/llama_* "$out"/layers/libmlp_[0-9]*.so # the apps and world-size-1 blocks: not needed
. bench/device/mlp_variant.sh
for w in $SPLIT_WIDTHS; do
  mlp_variant "mlp_tp2_${w}_k64" "${w%x*}" "${w#*x}" 2 --split-k-max-rows 64
  mlp_variant "mlp_tp2_${w}_k0" "${w%x*}" "${w#*x}" 2 --split-k-max-rows 0
done
strip "$out"/layers/*_k*.so
du -sh "$out"
