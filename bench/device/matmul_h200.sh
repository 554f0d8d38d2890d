#!/usr/bin/env bash
# The generated matmul kernels (symm-linalg-matmul-to-gpu) on one GPU:
# correctness against torch's f32 reference at several widths and token
# counts on both sides of the 16-row bound (measured choice, and each way
# forced), the per-kernel profile with the TB/s each matmul reads its
# weight at, the C++ Llama apps at world size 1 and at TP 2 with both ranks
# sharing the GPU, and compute-sanitizer on the generated kernels.
#
#   (here)   bench/device/matmul_build.sh target/mN
#   (device) bash bench/device/matmul_h200.sh target/mN
set -uo pipefail
B=${1:?usage: matmul_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20
L=$B/layers
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 300 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_LOG=info run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}"
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,3,8,16,17
  done
} 2>&1 | tee "$OUT/checks.log"
{
  for way in generated library; do
    SYMM_MATMUL=$way run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens= --profile 1,16
  done
} 2>&1 | tee "$OUT/profile.log"
{
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 17 128
  for way in measured generated library; do
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=1,16,17,128 --iterations=20
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 1 "$B/llama_decoder_w1" /tmp/ref --tokens=1,16,17,128 --iterations=20
  done
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,16,17 --iterations=5
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=1,16,17 --iterations=5
  done
} 2>&1 | tee "$OUT/apps.log"
{
  for tool in memcheck racecheck; do
    SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 240 compute-sanitizer --tool $tool --target-processes all --kernel-name kns=symm_matmul \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_2064x1000.so" 2064 1000 --tokens 16
  done
} 2>&1 | tee "$OUT/sanitizer.log"
