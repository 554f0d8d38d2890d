#!/usr/bin/env bash
# The tensor-core GEMV (symm-linalg-matmul-to-gpu's mma-gemv, 5 to 16 rows)
# on one GPU: checks against torch's f32 reference at four widths and at
# every dispatch edge (1, 4, 5, 8, 9, 16 rows take the GEMVs, 17 the
# tensor-core kernel; forced generated and measured), the per-kernel
# profile at 8 and 16 rows against the library's way and for each tiling
# variant, the C++ apps at world size 1 and at TP 2 with both ranks
# sharing the GPU, and compute-sanitizer memcheck and racecheck.
#
#   (here)   bench/device/mma_gemv_build.sh target/mg
#   (device) bash bench/device/mma_gemv_h200.sh target/mg
# PARTS (default "checks profile apps sanitizer"; also "resources" and
# "ncu") picks the parts to run.
set -uo pipefail
B=${1:?usage: mma_gemv_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20
L=$B/layers
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 150 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
part() { [[ " ${PARTS:-checks profile apps sanitizer} " == *" $1 "* ]]; }
part checks && {
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,4,5,8,9,13,16,17
    SYMM_LOG=info run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 8,16
  done
} 2>&1 | tee "$OUT/checks.log"
part profile && {
  for way in generated library; do
    SYMM_MATMUL=$way run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens= --profile 1,2,4,8,16
  done
  SYMM_MATMUL=generated run py "$L/libmlp_nomma.so" 4096 7168 --tokens= --profile 8,16
  SYMM_MATMUL=generated run py "$L/libmlp_mma_from2.so" 4096 7168 --tokens= --profile 2,4
  for lib in "$L"/libmlp_t*.so; do
    SYMM_MATMUL=generated run py "$lib" 4096 7168 --tokens= --profile 16
  done
} 2>&1 | tee "$OUT/profile.log"
part resources && {
  for lib in "$L"/libmlp_4096x7168.so "$L"/libmlp_t*.so; do
    echo "== $lib"
    cuobjdump --dump-resource-usage "$lib" 2>&1 | grep -A1 -E "symm_matmul_[01]_(mma16|gemv1)" | grep -v "^--"
  done
} 2>&1 | tee "$OUT/resources.log"
part ncu && {
  for lib in "$L"/libmlp_4096x7168.so; do
    SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 300 ncu --clock-control none --target-processes all --kernel-name regex:"${NCU_KERNELS:-mma16}" \
      --launch-skip 0 --launch-count 2 --section SpeedOfLight --section LaunchStats --section Occupancy \
      --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis_Tables \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$lib" 4096 7168 --tokens 16
  done
} 2>&1 | tee "$OUT/ncu.log"
part apps && {
  run python3 bench/model/reference.py --out /tmp/ref --m 1 5 9 16 17
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=1,5,16 --iterations=20
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 1 "$B/llama_decoder_w1" /tmp/ref --tokens=1,5,16 --iterations=20
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=9,17 --iterations=5
    SYMM_MATMUL=$way run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=9,17 --iterations=5
  done
} 2>&1 | tee "$OUT/apps.log"
part sanitizer && {
  for tool in memcheck racecheck; do
    for w in 5120x1728 4096x7168 2064x1000; do
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 240 compute-sanitizer --tool $tool --target-processes all --kernel-name kns=symm_matmul \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 9,16
    done
  done
} 2>&1 | tee "$OUT/sanitizer.log"
