#!/usr/bin/env bash
# Issue 32, session 16, one H200: the single matmuls' wgmma GEMV (calls of
# 17-128 rows; with `few` 2-16 too), build target/wg
# (bench/device/wgmma_build.sh):
#   1. the MLP block at five widths against torch's f32 reference at every
#      dispatch edge up to 129 rows, forced generated, and measured (the
#      choices logged);
#   2. A/B at 4096/7168 against the build without it (`nowg`), kernels per
#      call in a CUDA graph, two rounds;
#   3. compute-sanitizer memcheck and racecheck on the wgmma kernels;
#   4. the C++ apps (world 1, TP 2 on one GPU, up to 128 tokens) and
#      symm-gpu-tests at TP 2.
#   (device) tar -xJf target/wg.tar.xz -C target && bash bench/device/wgmma_h200.sh
set -uo pipefail
B=target/wg
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20 ALL_PARTS="checks ab sanitizer apps"
EDGES=${EDGES:-1,2,16,17,33,63,64,65,100,127,128,129}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
part checks && {
  for w in 4096x7168 3072x8192 5120x1728 2064x1000 8192x3584; do
    SYMM_MATMUL=generated run py "$B/layers/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens "$EDGES"
  done
  SYMM_MATMUL=generated run py "$B/layers/libfew.so" 4096 7168 --tokens 2,9,16,17
  SYMM_LOG=info run py "$B/layers/libmlp_4096x7168.so" 4096 7168 --tokens 16,17,64,128
} 2>&1 | tee "$OUT/checks.log"
part ab && {
  for round in 1 2; do
    for v in nowg mlp_4096x7168; do
      echo "== $v round $round"
      SYMM_MATMUL=generated run py "$B/layers/lib$v.so" 4096 7168 --tokens 2 --profile 32,64,128
    done
    for v in nowg few; do
      echo "== $v round $round"
      SYMM_MATMUL=generated run py "$B/layers/lib$v.so" 4096 7168 --tokens 2 --profile 2,16
    done
  done
} 2>&1 | tee "$OUT/ab.log"
part sanitizer && for tool in memcheck racecheck; do
  for w in 4096x7168 8192x3584; do
    SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 250 compute-sanitizer --tool $tool --target-processes all --kernel-name "kns=wgmma" \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$B/layers/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 17,100
  done
done 2>&1 | tee "$OUT/sanitizer.log"
part apps && {
  run python3 bench/model/reference.py --out /tmp/ref --m 1 4 9 16 17 33 128
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=1,16,17,128 --iterations=10
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,17,33,128 --iterations=5
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=1,17,33,128 --iterations=5
  done
  run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/apps.log"
