#!/usr/bin/env bash
# Issue 32, session 32: the tensor-core GEMVs' k-group sums 34 words a
# lane apart (was 36), stored 8 bytes at a time, so that the output
# stage's loads of a row's 32 columns hit 32 banks (they were 2-way
# conflicted; bench/results/2026-11-28-gemv-anatomy-h200.md). One H200:
#   1. against torch's f32 reference, forced generated: the MLP block at
#      five widths, the nn.Linear-layout and merged blocks, two decoders,
#      at every GEMV dispatch edge, and TP 2 with the ranks sharing the GPU
#      (the MLP at two widths, both decoders, the C++ app);
#   2. memcheck and racecheck on the tensor-core GEMVs (`mma`);
#   3. kernels per call of the 4096/7168 block, this build against the one
#      before ($B/layers/libmlp_before.so), 3 weight copies, two rounds.
#   Scratch patch (not kept: no measured gain): git apply bench/device/sums_layout.patch
#   (here) WIDTHS="4096x7168 3072x8192 5120x1728 2064x1000 8192x3584" \
#            LINEAR_WIDTHS="4096x7168 2064x1000" MERGED_WIDTHS=4096x7168 \
#            DECODER_WIDTHS="4096x2048x7168 2064x1040x1000" TP_WORLDS=2 \
#            LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/lw
#          cp target/s32/layers/libmlp_4096x7168.so target/lw/layers/libmlp_before.so
#   (device) bash bench/device/sums_layout_h200.sh target/lw
B=${1:-target/lw}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
edges=1,2,7,8,9,15,16,17
{
  for w in 4096x7168 3072x8192 5120x1728 2064x1000 8192x3584; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens "$edges"
  done
  for w in 4096x7168 2064x1000; do
    SYMM_MATMUL=generated run py "$L/liblinear_$w.so" "${w%x*}" "${w#*x}" --linear --tokens "$edges"
  done
  SYMM_MATMUL=generated run py "$L/libmerged_4096x7168.so" 4096 7168 --merged --tokens "$edges"
  for w in 4096x2048x7168 2064x1040x1000; do
    SYMM_MATMUL=generated dec_py "dec_$w" "$w" --tokens "$edges"
    IFS=x read -r d a f <<< "$w"
    run tp_py 2 "$L/libdec_tp2_$w.so" "$d" "$f" --decoder "$a" --tokens 1,9,16,17
  done
  tp2_mlp_checks "4096x7168 2064x1000"
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
sanitize_mma "memcheck racecheck" "4096x7168 2064x1000" 2>&1 | tee "$OUT/sanitize.log"
for round in 1 2; do
  for lib in before 4096x7168; do
    echo "== libmlp_$lib round $round"
    SYMM_MATMUL=generated run py "$L/libmlp_$lib.so" 4096 7168 --tokens 16 --profile 2,8,16 --profile-copies 3
  done
done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
