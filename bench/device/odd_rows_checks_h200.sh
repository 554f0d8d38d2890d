#!/usr/bin/env bash
# Issue 32, session 32: the block reductions of session 31
# (symm-gpu-block-reduce) above 128 rows, where every matmul is cuBLAS's
# and the rows kernels carry the layer: the RMSNorm statistic before the
# pair, the two-shot all-reduce + residual (+ the next RMSNorm in the
# decoder) at 2-8 ranks. Session 31 checked the odd widths up to 128 rows
# and the 4096-wide apps (16 warps a row) up to 2048. Here, one H200,
# every output against torch's f32 reference:
#   - world size 1: the MLP block at hidden 2064, 3072 and 5120 (9, 12 and
#     20 warps a row) at 129-2048 rows;
#   - TP 2, 4 and 8 with the ranks sharing the GPU: the 2064/1000 and
#     5120/1728 blocks and the 2064x1040x1000 decoder half-layer (F and A
#     the features a rank holds), at every dispatch edge up to 2048 rows.
#   (here) WIDTHS="2064x1000 3072x8192 5120x1728" TP_WORLDS="2 4 8" \
#            DECODER_WIDTHS="2064x1040x1000" LAYER_FLAGS="--chip sm_90a" \
#            bench/device/matmul_build.sh target/odd
#   (device) bash bench/device/odd_rows_checks_h200.sh target/odd
B=${1:?usage: odd_rows_checks_h200.sh BUILD}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
big=129,256,1000,1024,1025,2048
{
  for w in 2064x1000 3072x8192 5120x1728; do
    run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens "$big"
  done
  for world in 2 4 8; do
    tokens=1,16,17,64,65,128,$big
    [ "$world" = 8 ] && tokens=1,17,129,1025,2048
    for w in 2064x1000 5120x1728; do
      run tp_py "$world" "$L/libmlp_tp${world}_$w.so" "${w%x*}" "${w#*x}" --tokens "$tokens"
    done
    run tp_py "$world" "$L/libdec_tp${world}_2064x1040x1000.so" 2064 1000 --decoder 1040 --tokens "$tokens"
  done
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
