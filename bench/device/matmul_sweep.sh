#!/usr/bin/env bash
# The generated matmul kernels' tilings (matmul_sweep_build.sh) on one GPU:
# a correctness check at 1, 16 and 17 rows, then the per-kernel profile
# (µs and the TB/s each matmul reads its weight at) with the generated
# kernels forced, and once with cuBLAS (SYMM_MATMUL=library), beside the
# floor (bench/floor: the fastest streaming read of the same bytes, and
# cuBLAS reading them).
#
#   (device) bash bench/device/matmul_sweep.sh target/sN
set -uo pipefail
B=${1:?usage: matmul_sweep.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=$B/layers
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 120 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  if [[ -z ${NO_FLOOR:-} ]]; then
    nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stream_read bench/floor/stream_read.cu
    # The weight bytes of the gate+up pair and the down projection, at each width.
    /tmp/stream_read 234881024 117440512 58720256
    python3 bench/floor/floor.py 234881024 117440512 58720256
  fi
  for lib in "$L"/libmlp_*.so; do
    name=$(basename "$lib" .so); w=${name#libmlp_}; w=${w%%_*}
    SYMM_MATMUL=generated run py "$lib" "${w%x*}" "${w#*x}" --tokens 1,16,17 --profile 1,16
  done
  for w in ${WIDTHS:-4096x14336 4096x7168}; do
    lib=$(ls "$L"/libmlp_${w}_*.so | head -1)
    SYMM_MATMUL=library run py "$lib" "${w%x*}" "${w#*x}" --tokens= --profile 1,16
  done
} 2>&1 | tee "$OUT/sweep.log"
