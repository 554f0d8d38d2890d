#!/usr/bin/env bash
# Issue 32, session 30, one H200 (build: wgmma_short_build.sh). The
# short-grid wgmma GEMV as committed (--chip sm_90a) against the build
# before (sm_90):
#   timing    the decoder at TP 2/4/8's widths, world size 1, measured choice,
#             kernels per call in a CUDA graph on 3 weight copies at 1 and 16
#             rows, two rounds (choices logged in round 1)
#   sanitize  memcheck and racecheck on the wgmma16 kernels (TP 2's widths and
#             2064x1040x1000), forced generated, 2 and 16 rows
#   checks    every sm_90a decoder against torch's f32 reference: world size 1
#             forced generated at the dispatch edges and measured; TP 2, 4 and 8
#             with the ranks sharing GPU 0; the C++ apps at TP 2 (ranks sharing
#             the GPU), measured and generated
#   (device) tar -xJf target/s30c.tar.xz -C target && bash bench/device/wgmma_short_h200.sh target/s30c
set -uo pipefail
B=${1:?usage: wgmma_short_h200.sh BUILD_DIR}
ALL_PARTS="timing sanitize checks"
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
LLAMA="4096x2048x7168 4096x1024x3584 4096x512x1792"
ALL="$LLAMA 5120x1280x1728 2064x1040x1000"
if part timing; then
  for round in 1 2; do
    log=; [[ $round == 1 ]] && log=info
    for w in $LLAMA; do
      for v in _sm90 ""; do
        echo "== dec_$w$v round $round"
        SYMM_LOG=$log dec_py "dec_$w$v" "$w" --tokens 16 --profile 1,16 --profile-copies 3
      done
    done
  done 2>&1 | tee "$OUT/timing.log" | grep "^== dec\|wall per call\|wgmma\|FAIL"
fi
if part sanitize; then
  for tool in memcheck racecheck; do
    for w in 4096x2048x7168 2064x1040x1000; do
      IFS=x read -r d a f <<< "$w"
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 250 compute-sanitizer --tool $tool --target-processes all --kernel-name kns=wgmma16 \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libdec_$w.so" "$d" "$f" \
        --decoder "$a" --tokens 2,16
    done
  done 2>&1 | tee "$OUT/sanitize.log" | grep "ERROR SUMMARY\|RACECHECK SUMMARY\|exit status\|PASS\|FAIL"
fi
if part checks; then
  (
    for w in $ALL; do
      IFS=x read -r d a f <<< "$w"
      SYMM_MATMUL=generated dec_py "dec_$w" "$w" --tokens 1,2,8,9,15,16,17,33
      SYMM_LOG=info dec_py "dec_$w" "$w" --tokens 1,16 --profile 16
      for world in 2 4 8; do
        [[ $world == 8 && $w != 4096x512x1792 ]] && continue
        tp_py "$world" "$L/libdec_tp${world}_$w.so" "$d" "$f" --decoder "$a" --tokens 1,2,16,17
      done
    done
    tp2_apps llama_decoder_w2 llama_mlp_w2
  ) > "$OUT/checks.log" 2>&1
  grep "^== \|wall per call\|wgmma\|takes the" "$OUT/checks.log" | grep -v "^== py\|^== timeout" | head -60
  tally checks "$OUT/checks.log"
fi
