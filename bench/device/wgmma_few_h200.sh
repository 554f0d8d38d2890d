#!/usr/bin/env bash
# Issue 32, session 30, one H200 (build: wgmma_few_build.sh). The single
# matmuls' 16-row wgmma GEMV with an 8-stage ring (_wg8) against the
# default build, world size 1, measured choice (what a user gets):
#   timing  two rounds; the MLP block's kernels per call in a CUDA graph on
#           3 weight copies at 2, 8 and 16 rows, the decoder's at TP 2, 4 and
#           8's widths at 1 and 16 rows (choices logged in round 1)
#   checks  the _wg8 layers forced generated at the dispatch edges against
#           torch's f32 reference, and the _wg8 C++ apps at TP 2 with both
#           ranks on one GPU, measured and generated
#   sanitize  memcheck and racecheck on the wgmma16 kernels (decoder, TP 2)
#   (device) tar -xJf target/s30b.tar.xz -C target && bash bench/device/wgmma_few_h200.sh target/s30b
set -uo pipefail
B=${1:?usage: wgmma_few_h200.sh BUILD_DIR}
ALL_PARTS="timing checks sanitize"
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
if part timing; then
  for round in 1 2; do
    log=; [[ $round == 1 ]] && log=info
    for v in "" _wg8; do
      echo "== mlp$v round $round"
      SYMM_LOG=$log run py "$L/libmlp_4096x7168$v.so" 4096 7168 --tokens 16 --profile 2,8,16 --profile-copies 3
      for w in 4096x2048x7168 4096x1024x3584 4096x512x1792; do
        echo "== dec_$w$v round $round"
        SYMM_LOG=$log dec_py "dec_$w$v" "$w" --tokens 16 --profile 1,16 --profile-copies 3
      done
    done
  done 2>&1 | tee "$OUT/timing.log" | grep "==\|us x1\|wall\|takes\|FAIL"
fi
if part checks; then
  (
    SYMM_MATMUL=generated run py "$L/libmlp_4096x7168_wg8.so" 4096 7168 --tokens 1,2,4,5,8,9,15,16,17
    for w in 4096x2048x7168 4096x1024x3584 4096x512x1792; do
      SYMM_MATMUL=generated dec_py "dec_${w}_wg8" "$w" --tokens 1,2,9,15,16,17
    done
    tp2_apps llama_mlp_w2_wg8 llama_decoder_w2_wg8
  ) > "$OUT/checks.log" 2>&1
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  for tool in memcheck racecheck; do
    SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 250 compute-sanitizer --tool $tool --target-processes all --kernel-name kns=wgmma16 \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libdec_4096x2048x7168_wg8.so" 4096 7168 \
      --decoder 2048 --tokens 2,16
  done 2>&1 | tee "$OUT/sanitize.log" | grep "ERROR SUMMARY\|RACECHECK SUMMARY\|exit status\|PASS\|FAIL"
fi
