#!/usr/bin/env bash
# Issue 32, session 31: compute-sanitizer over every kernel of the decoder
# half-layer (the all-reduce + RMSNorm rows kernels, the GEMVs, the
# short-grid wgmma GEMV, cuBLAS's), with no kernel filter (a filter that
# matches nothing makes racecheck fault while cuBLAS runs:
# 2026-11-28-block-reduce-h200x2.md), eager, 16 and 17 rows:
#   racecheck and synccheck at world size 1, generated and cuBLAS, at
#   2064x1040x1000 (9-warp rows) and 4096x2048x7168;
#   racecheck at TP 2 with both ranks on GPU 0 (the Lamport rows kernels).
# Build: block_reduce_h200.sh's (target/br). Hazards in cuBLAS's nvjet
# kernels are counted apart.
B=${1:-target/br}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0 SYMM_CUDA_GRAPHS=0
sanitized() { # TOOL RANKS LIB D F A
  local tool=$1 ranks=$2 lib=$3 d=$4 f=$5 a=$6 gpus=()
  [[ $ranks -gt 1 ]] && gpus=(--gpus 1)
  SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 150 compute-sanitizer --tool "$tool" --target-processes all \
    "$B/symm-launch" -n "$ranks" "${gpus[@]}" python3 bench/model/matmul_check.py "$L/$lib" "$d" "$f" \
    --decoder "$a" --tokens 16,17 > /tmp/sanitized.log 2>&1
  echo "status $? nvjet hazard lines $(grep -c 'nvjet' /tmp/sanitized.log)"
  grep "SUMMARY\|Internal\|PASS\|FAIL\|rror" /tmp/sanitized.log | grep -v nvjet | sort | uniq -c | cut -c1-220
}
for w in 2064x1040x1000 4096x2048x7168; do
  IFS=x read -r d a f <<< "$w"
  for tool in racecheck synccheck; do
    for way in generated library; do
      echo "== $tool dec_$w SYMM_MATMUL=$way"
      SYMM_MATMUL=$way sanitized $tool 1 "libdec_$w.so" "$d" "$f" "$a"
    done
  done
  echo "== racecheck dec_tp2_$w TP 2 on one GPU, measured"
  sanitized racecheck 2 "libdec_tp2_$w.so" "$d" "$f" "$a"
done 2>&1 | tee "$OUT/sanitize_decoders.log"
