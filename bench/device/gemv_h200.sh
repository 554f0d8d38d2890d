#!/usr/bin/env bash
# The one-row GEMV (symm-linalg-matmul-to-gpu's gemv) on one GPU: checks
# against torch's f32 reference at four widths (one row takes the GEMV;
# forced generated and measured), the per-kernel profile at M = 1 for the
# default build and the tiling variants, the C++ apps at world size 1 and
# at TP 2 with both ranks sharing the GPU, and compute-sanitizer memcheck
# and racecheck on the GEMV kernels.
#
#   (here)   bench/device/gemv_build.sh target/gv
#   (device) bash bench/device/gemv_h200.sh target/gv
set -uo pipefail
B=${1:?usage: gemv_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20
L=$B/layers
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 300 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,16
    SYMM_LOG=info run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,16
  done
} 2>&1 | tee "$OUT/checks.log"
{
  for way in generated library; do
    SYMM_MATMUL=$way run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens= --profile 1,16
  done
  for v in nogemv s4 s8 c32 k64u4 k64u8 k32u4 k32u8 k16u8 s4k32u8; do
    echo "== variant $v"
    SYMM_MATMUL=generated run py "$L/libmlp_$v.so" 4096 7168 --tokens 1 --profile 1
  done
  SYMM_MATMUL=library run py "$L/libmlp_s4.so" 4096 7168 --tokens= --profile 1,16,128
  SYMM_MATMUL=library run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens= --profile 128
} 2>&1 | tee "$OUT/profile.log"
{
  run python3 bench/model/reference.py --out /tmp/ref --m 1 2 16 17
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=1,2,16 --iterations=20
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 1 "$B/llama_decoder_w1" /tmp/ref --tokens=1,2,16 --iterations=20
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,17 --iterations=5
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=1,17 --iterations=5
  done
} 2>&1 | tee "$OUT/apps.log"
{
  for tool in memcheck racecheck; do
    for w in 2064x1000 5120x1728; do
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 240 compute-sanitizer --tool $tool --target-processes all --kernel-name kns=symm_matmul \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1
    done
  done
} 2>&1 | tee "$OUT/sanitizer.log"
