#!/usr/bin/env bash
# Issue 32, session 31: the block reductions (`gpu.all_reduce`) lowered by
# symm-gpu-block-reduce instead of convert-gpu-to-nvvm, whose lowering had
# every thread of the first warp store its own partial sum into one shared
# word (racecheck: WAW hazard in the 288-thread RMSNorm kernel of the
# 2064-wide MLP block). One H200:
#   1. the MLP block at five widths (warps a row: 16, 12, 20, 9, 32) and two
#      decoder half-layers, forced generated and forced cuBLAS (the latter
#      runs the RMSNorm rows kernels), against torch's f32 reference; the
#      decoders at TP 2 with ranks sharing the GPU (the all-reduce + RMSNorm
#      rows kernels);
#   2. racecheck (every kernel instrumented) and memcheck on the 2064 and
#      3072 blocks, cuBLAS and generated, eager;
#   3. kernels per call of the 4096/7168 block, this build against the one
#      before ($B/layers/libmlp_before.so), 3 weight copies, two rounds.
#   (here) WIDTHS="4096x7168 3072x8192 5120x1728 2064x1000 8192x3584" \
#            DECODER_WIDTHS="4096x2048x7168 2064x1040x1000" TP_WORLDS=2 LAYER_FLAGS="--chip sm_90a" \
#            bench/device/matmul_build.sh target/br
#          cp target/s31/layers/libmlp_4096x7168.so target/br/layers/libmlp_before.so
B=${1:-target/br}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
{
  for way in generated library; do
    for w in 4096x7168 3072x8192 5120x1728 2064x1000 8192x3584; do
      SYMM_MATMUL=$way run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,9,16,17,64,128
    done
    for w in 4096x2048x7168 2064x1040x1000; do
      SYMM_MATMUL=$way dec_py "dec_$w" "$w" --tokens 1,2,9,16,17,64,128
      IFS=x read -r d a f <<< "$w"
      SYMM_MATMUL=$way run tp_py 2 "$L/libdec_tp2_$w.so" "$d" "$f" --decoder "$a" --tokens 1,16,17,128
    done
  done
  tp2_apps llama_mlp_w2 llama_decoder_w2
  run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
for round in 1 2; do
  for lib in before 4096x7168; do
    for way in generated library; do
      echo "== libmlp_$lib $way round $round"
      SYMM_MATMUL=$way run py "$L/libmlp_$lib.so" 4096 7168 --tokens 16 --profile 1,16,128 --profile-copies 3
    done
  done
done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
{
  for w in 2064x1000 3072x8192; do
    for tool in racecheck memcheck; do
      for way in library generated; do
        SYMM_MATMUL=$way SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
          timeout 150 compute-sanitizer --tool $tool --target-processes all \
          "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" \
          --tokens 16,17 2>&1 | grep "SUMMARY\|Internal\|PASS\|FAIL\|rror" | grep -v nvjet | sort | uniq -c | cut -c1-200
        echo "== $tool $w SYMM_MATMUL=$way done"
      done
    done
  done
} 2>&1 | tee "$OUT/sanitize.log"
