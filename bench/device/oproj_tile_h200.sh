#!/usr/bin/env bash
# Issue 32, session 30, one H200 (build: oproj_tile_build.sh). How fast can
# a generated kernel read the decoder's o_proj (TP 2: K = 2048, N = 4096,
# 16.8 MB) at 1 and 16 rows? cuBLAS takes it at 16 rows (7.8 against 9.7
# µs measured, session 27), which keeps the decoder's 16-row graphs off
# the launch lists. World size 1, the decoder at TP 2's widths, forced
# generated: checks at the dispatch edges, then its kernels per call in a
# CUDA graph on 3 weight copies, two rounds; the shipped build measured.
#   (device) tar -xJf target/s30.tar.xz -C target && bash bench/device/oproj_tile_h200.sh target/s30
set -uo pipefail
B=${1:?usage: oproj_tile_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
variants=${VARIANTS:-dec_4096x2048x7168 dec_k2048 dec_tma8 dec_k2048_tma8 dec_k2048_wg dec_g32}
for round in 1 2; do
  for v in $variants; do
    echo "== $v round $round"
    tokens=1,16; [[ $round == 1 ]] && tokens=1,2,9,16,17
    SYMM_MATMUL=generated CUDA_VISIBLE_DEVICES=0 run py "$L/lib$v.so" 4096 7168 --decoder 2048 \
      --tokens "$tokens" --profile 1,16 --profile-copies 3
  done
done 2>&1 | tee "$OUT/oproj_tile.log" | grep -v "^PASS"
echo "== the shipped build, measured"
SYMM_LOG=info CUDA_VISIBLE_DEVICES=0 run py "$L/libdec_4096x2048x7168.so" 4096 7168 --decoder 2048 \
  --tokens 1,16 --profile 1,16 --profile-copies 3 2>&1 | tee "$OUT/measured.log" | grep -v "^PASS"
tally checks "$OUT/oproj_tile.log"
