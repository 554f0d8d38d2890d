#!/usr/bin/env bash
# Issue 32, session 18, one H200: the MLP block at widths no earlier check
# used, against torch's f32 reference (bench/model/matmul_check.py: NaN-poisoned
# output, per-element and relative-L2 tolerances, twice per count and in a
# CUDA graph), forced generated and measured, at the dispatch edges and up to
# 2048 rows. Widths (D hidden x F the rank's MLP width):
#   8192x3584  Llama-3-70B at TP 8 (the pair's rows too long to stage: the
#              norm streams)
#   1536x4480  Qwen2-1.5B at TP 2;  3584x9472  Qwen2.5-7B at TP 2
#   4104x7184  K = 4104 no multiple of 16 (the pair keeps cuBLAS, a remark);
#              N = 7184 a partial 64-column tile
#   2048x5632  TinyLlama;  1000x2064  D no multiple of 16;  128x384 tiny
#   4096x7168  the Llama-3-8B TP-2 rank, as a control
#   (here)   WIDTHS="8192x3584 1536x4480 3584x9472 4104x7184 2048x5632 1000x2064 128x384 4096x7168" \
#              bench/device/matmul_build.sh target/wd && tar -cJf target/wd.tar.xz target/wd
#   (device) tar -xJf target/wd.tar.xz && bash bench/device/widths_h200.sh target/wd
set -uo pipefail
B=${1:?usage: widths_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20
L=$B/layers
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 200 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
TOKENS=${TOKENS:-1,2,3,7,8,9,15,16,17,31,33,64,65,100,128,129,300,1000,2048}
for w in ${WIDTHS:-8192x3584 1536x4480 3584x9472 4104x7184 2048x5632 1000x2064 128x384 4096x7168}; do
  for way in generated measured; do
    SYMM_MATMUL=$way SYMM_LOG=${SYMM_LOG:-warn} run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens "$TOKENS"
  done
done 2>&1 | tee "$OUT/widths.log"
echo "exit statuses: $(grep -c '^exit status 0' "$OUT/widths.log") zero, $(grep '^exit status' "$OUT/widths.log" | grep -vc 'status 0$') non-zero"
