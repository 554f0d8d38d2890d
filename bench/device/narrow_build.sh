#!/usr/bin/env bash
# Issue 32, session 36: register GEMVs whose 64-column grid wastes a wave,
# run as 64-column bands with half the k-groups (half the threads) and two
# blocks an SM (.minnctapersm from the grid) instead of 128-column bands
# with one (the widening of waves.rs). Scratch patch, compile-time
# SYMM_EXP_NARROW / SYMM_EXP_CORESIDENT: git apply bench/device/narrow.patch
#   bench/device/narrow_build.sh target/nw
# builds HEAD's default (matmul_build.sh, TP 2 too) at the widths below and,
# beside its layers, libmlp_<w>_nar.so and libmlp_tp2_<w>_nar.so; for
# narrow_h200.sh's other parts also _u3/_u4 (--matmul-mma-gemv 64,8,U), _wgf
# and _wgf8 (the opt-in wgmma GEMV for 2-16 rows, default and 8 stages), the
# Llama-3-8B block at TP 4 and 8, and the apps as apps.tar.xz (the carry
# limit). libmlp_badproto.so (part protocol) is the 4096x7168 block at world
# size 1 compiled by a symm-compile built with symm_protocol's
# PROTOCOL_REVISION changed (then changed back), linked like these.
# The calls carried target/nw/layers and symm-launch (and symm-gpu-tests for
# verify, apps.tar.xz for apps), under the 64 MiB limit.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: narrow_build.sh DIR}
NARROW_WIDTHS=${NARROW_WIDTHS:-"6656x8960 3584x9472 5120x13824 8192x14336 5120x6912 4096x7168 2064x1000"}
WIDTHS="$NARROW_WIDTHS" TP_WORLDS=2 LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh "$out"
. bench/device/mlp_variant.sh
for w in $NARROW_WIDTHS; do
  SYMM_EXP_NARROW=1 SYMM_EXP_CORESIDENT=1 mlp_variant "mlp_${w}_nar" "${w%x*}" "${w#*x}" 1
  SYMM_EXP_NARROW=1 SYMM_EXP_CORESIDENT=1 mlp_variant "mlp_tp2_${w}_nar" "${w%x*}" "${w#*x}" 2
done
for w in 6656x8960 3584x9472 5120x6912 4096x7168; do
  for u in 3 4; do mlp_variant "mlp_${w}_u$u" "${w%x*}" "${w#*x}" 1 --matmul-mma-gemv "64,8,$u"; done
done
for w in 6656x8960 5120x6912 5120x13824; do
  mlp_variant "mlp_${w}_wgf" "${w%x*}" "${w#*x}" 1 --matmul-wgmma-gemv --matmul-wgmma-gemv-few
  mlp_variant "mlp_${w}_wgf8" "${w%x*}" "${w#*x}" 1 --matmul-wgmma-gemv --matmul-wgmma-gemv-few \
    --matmul-wgmma-gemv-stages 8
done
mlp_variant mlp_tp4_4096x3584 4096 3584 4
mlp_variant mlp_tp8_4096x1792 4096 1792 8
strip "$out"/layers/*.so
tar -cJf "$out/apps.tar.xz" -C "$out" llama_mlp_w2 llama_decoder_w2
rm -f "$out"/llama_*
du -sh "$out"
