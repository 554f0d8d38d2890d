#!/usr/bin/env bash
# Issue 32, session 8, one H200: the GEMV whose weight the TMA streams
# (`tma16`) checked and timed (carried as target/tg.tar.xz from
# bench/device/tma_gemv_build.sh target/tg).
#   checks:    the MLP block at four widths against torch's f32 reference,
#              forced generated at every dispatch edge (1, 2, 4, 5, 16, 17
#              rows) and measured;
#   ab:        kernels per call in a CUDA graph, forced generated, at 2, 8
#              and 16 rows: the block with `tma16` and without (`notma`:
#              `mma16`), two rounds;
#   sanitizer: memcheck at 4096/7168 and 5120/1728, racecheck at 4096/7168
#              (2 and 16 rows, forced generated);
#   apps:      the C++ apps at world 1 and at TP 2 on one GPU.
#   (device) bash bench/device/tma_gemv_h200.sh   (PARTS picks)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
rm -rf target/tg && tar -xJf target/tg.tar.xz
B=target/tg L=$B/layers
export SYMM_TIMEOUT_S=20
part() { [[ " ${PARTS:-checks ab sanitizer apps} " == *" $1 "* ]]; }
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 150 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
part checks && {
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,4,5,16,17 --profile 16
  done
  SYMM_LOG=info run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 2,16
} 2>&1 | tee "$OUT/checks.log"
part ab && {
  for round in 1 2; do
    for lib in mlp_4096x7168 mlp_notma; do
      SYMM_MATMUL=generated run py "$L/lib$lib.so" 4096 7168 --tokens 2 --profile 2,8,16
    done
  done
} 2>&1 | tee "$OUT/ab.log"
# The TMA tilings (tma_gemv_build.sh's TMA_TILINGS) beside the default and
# mma16, wall per call in a graph.
part sweep && {
  for lib in mlp_4096x7168 mlp_notma $(cd $L && ls libmlp_t*.so | sed 's/^lib//; s/\.so$//'); do
    SYMM_MATMUL=generated run py "$L/lib$lib.so" 4096 7168 --tokens 16 --profile 2,16
  done
} 2>&1 | tee "$OUT/sweep.log"
part sanitizer && {
  for w in 4096x7168 5120x1728; do
    SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 250 compute-sanitizer --tool memcheck --target-processes all --kernel-name kns=symm_matmul \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 2,16
  done
  SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    run timeout 250 compute-sanitizer --tool racecheck --target-processes all --kernel-name kns=tma16 \
    "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 16
} 2>&1 | tee "$OUT/sanitizer.log"
part apps && {
  run timeout 120 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
  run python3 bench/model/reference.py --out /tmp/ref --m 1 4 9 16 17
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=1,4,16 --iterations=10
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 1 "$B/llama_decoder_w1" /tmp/ref --tokens=1,4,16 --iterations=10
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,9,17 --iterations=5
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=1,9,17 --iterations=5
  done
} 2>&1 | tee "$OUT/apps.log"
