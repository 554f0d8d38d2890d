#!/usr/bin/env bash
# Builds what oproj_tile_h200.sh runs into DIR (issue 32, session 30): the
# decoder half-layer at TP 2's widths at world size 1 (dec_4096x2048x7168),
# as is and with its output projection (K = 2048, N = 4096: 64 blocks of the
# generated GEMVs on 132 SMs) read other ways:
#   k2048        --split-k-min-k 2048 (two slices, 128 blocks)
#   tma8         --matmul-tma-gemv 4,8,128 (the TMA GEMV, 8 stages of 128
#                rows: 128 KB of each block's weight in flight)
#   k2048_tma8   both
#   k2048_wg     --split-k-min-k 2048 with the 16-row wgmma GEMV (sm_90a)
#   g32          --matmul-gemv 32,64,2 (the one-row GEMVs 32 columns a block)
#   wg, wg_s6, wg_s8   the 16-row wgmma GEMV unsplit (64 blocks), its ring
#                at its default 4 stages, 6 and 8 (--matmul-wgmma-gemv-stages)
#   k2048_wg_s8  the split one with 8 stages
#   bench/device/oproj_tile_build.sh target/s30 && tar -cJf target/s30.tar.xz -C target s30
set -euo pipefail
out=${1:?usage: oproj_tile_build.sh DIR}
cd "$(dirname "$0")/../.."
WIDTHS=" " DECODER_WIDTHS=4096x2048x7168 bench/device/matmul_build.sh "$out"
rm -f "$out"/llama_*_w1
mkdir -p "$out/src"
sed -e "s/world_size(2)/world_size(1)/" examples/llama_decoder.mlir > "$out/src/dec.mlir"
variant() { # name flags...
  local name=$1
  shift
  target/release/symm-compile "$out/src/dec.mlir" -o "$out/src/$name.o" "$@"
  c++ -shared -o "$out/layers/libdec_$name.so" "$out/src/$name.o" -L"$out/layers" -lsymm_runtime \
    -Wl,-rpath,'$ORIGIN'
}
variant k2048 --split-k-min-k 2048
variant tma8 --matmul-tma-gemv 4,8,128
variant k2048_tma8 --split-k-min-k 2048 --matmul-tma-gemv 4,8,128
variant k2048_wg --split-k-min-k 2048 --chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few
variant g32 --matmul-gemv 32,64,2
wg="--chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few"
variant wg $wg
variant wg_s6 $wg --matmul-wgmma-gemv-stages 6
variant wg_s8 $wg --matmul-wgmma-gemv-stages 8
variant k2048_wg_s8 --split-k-min-k 2048 $wg --matmul-wgmma-gemv-stages 8
strip "$out"/layers/*.so
rm -rf "$out/src"
du -sh "$out"
