#!/usr/bin/env bash
# Issue 32, session 42: the wgmma GEMV's ring filled with its first stages
# of weight before its wait for the grid before (griddepcontrol.wait),
# while that grid drains. The weight is no grid's output, so only `a`'s
# boxes wait. This ran (call 1 of 2026-11-29-ring-before-wait-h200.md) on a
# scratch tree in which SYMM_EXP_WGMMA_PREFILL, read by the pass, filled
# every wgmma GEMV's ring early; that landed as GemvTile::fills_before_wait
# for the after-GEMV rule only, and ring_before_wait_build.sh builds the rule
# as it landed. Builds into DIR, sm_90a:
#   base   the 4096/7168 block as committed (mma16_staged at 9-16 rows)
#   wg     the 16-row wgmma GEMV for the down projection (4 stages)
#   wg8    the same with 8 stages (as the short-grid rule's)
#   pf     wg with the prefill
#   pf8    wg8 with the prefill
#   pf8_5120x1728, mlp_tp2_pf8_4096x7168: pf8 at a shard width and at TP 2
#   dec_*  the decoder half-layers (TP 2's and TP 8's widths) as committed
#          (o_proj on the short grid's wgmma16), decpf_* with the prefill
#   WIDTHS=... bench/device/wgmma_prefill_build.sh target/pf
out=${1:?usage: wgmma_prefill_build.sh DIR}
export WIDTHS="4096x7168 5120x1728" TP_WORLDS=2 DECODER_WIDTHS="4096x2048x7168 4096x512x1792" \
  LAYER_FLAGS="--chip sm_90a"
. "$(dirname "$0")/variant_layers.sh"
wg="--chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few"
# The sources matmul_build.sh removed: the 5120/1728 block, the TP-2 block
# and the decoders (at world size 1 and 2).
sed -e 's/4096/5120/g' -e 's/7168/1728/g' "$out/src/mlp.mlir" > "$out/src/mlp_5120x1728.mlir"
cp examples/llama_mlp.mlir "$out/src/mlp_tp2_4096x7168.mlir"
for w in 4096x2048x7168 4096x512x1792; do
  IFS=x read -r d a f <<< "$w"
  for world in 1 2; do
    name=dec_tp${world}_$w
    [[ $world == 1 ]] && name=dec_$w
    sed -e "s/world_size(2)/world_size($world)/" -e "s/2048x4096xbf16/@A@x4096xbf16/g" \
      -e "s/?x2048xbf16/?x@A@xbf16/g" -e "s/4096/$d/g" -e "s/7168/$f/g" -e "s/@A@/$a/g" \
      examples/llama_decoder.mlir > "$out/src/$name.mlir"
  done
done
# shellcheck disable=SC2086 # the flags are words
{
  layer base "$out/src/mlp.mlir" --chip sm_90a
  layer wg "$out/src/mlp.mlir" $wg
  layer wg8 "$out/src/mlp.mlir" $wg --matmul-wgmma-gemv-stages 8
  export SYMM_EXP_WGMMA_PREFILL=1
  layer pf "$out/src/mlp.mlir" $wg
  layer pf8 "$out/src/mlp.mlir" $wg --matmul-wgmma-gemv-stages 8
  layer pf8_5120x1728 "$out/src/mlp_5120x1728.mlir" $wg --matmul-wgmma-gemv-stages 8
  layer mlp_tp2_pf8_4096x7168 "$out/src/mlp_tp2_4096x7168.mlir" $wg --matmul-wgmma-gemv-stages 8
  for w in 4096x2048x7168 4096x512x1792; do
    layer "decpf_$w" "$out/src/dec_$w.mlir" --chip sm_90a
    layer "dec_tp2_pf_$w" "$out/src/dec_tp2_$w.mlir" --chip sm_90a
  done
  unset SYMM_EXP_WGMMA_PREFILL
}
rm -f "$out/symm-gpu-tests" "$out"/llama_*
finish
