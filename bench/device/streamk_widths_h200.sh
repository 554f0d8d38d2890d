#!/usr/bin/env bash
# Issue 32, session 36 (one H200): session 19's stream-K probe
# (bench/gemv_probe/fused_mlp.cu) at the widths whose GEMV grids waste a
# wave: the pair alone on its 64-column tiles (one block an SM, waves) against
# stream-K on one block an SM, beside a read of the pair's bytes
# (PAIR_ONLY), then the probe's sep3 / sk1 / sk2 blocks checked against its
# f32 reference (SK_ONLY).
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export CUDA_VISIBLE_DEVICES=0
for w in ${PROBE_WIDTHS:-6656x8960 3584x9472 4096x7168}; do
  nvcc -O3 -arch=sm_90a -DPROBE_D="${w%x*}" -DPROBE_F="${w#*x}" -o "/tmp/fused_mlp_$w" bench/gemv_probe/fused_mlp.cu &
done
wait
for w in ${PROBE_WIDTHS:-6656x8960 3584x9472 4096x7168}; do
  PAIR_ONLY=1 SK_ONLY=1 run timeout 200 "/tmp/fused_mlp_$w"
done 2>&1 | tee "$OUT/streamk_widths.log"
