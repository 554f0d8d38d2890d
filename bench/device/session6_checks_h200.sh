#!/usr/bin/env bash
# Session 6 (issue 32), one GPU: the final build's correctness with the
# tensor-core GEMV and programmatic dependent launch on.
#   PART=1: final_checks_h200.sh (four widths against torch's f32
#           reference, the C++ apps at world 1 and TP 2, memcheck) and
#           racecheck on the generated kernels;
#   PART=2: the apps at TP 2, 4 and 8 with the ranks sharing the GPU, as
#           measured and with the generated matmuls forced (every shard
#           width, the GEMVs' row edges);
#   PART=3: symm-gpu-tests, dead peers and the error paths.
#
#   (here)   MMA_TILINGS=" " bench/device/mma_gemv_build.sh target/mg
#            bench/device/shared_gpu_build.sh target/g6; tar cJf target/g6.tar.xz target/g6
#   (device) PART=1 bash bench/device/session6_checks_h200.sh
set -uo pipefail
here=$(dirname "$0")
. "$here/lib.sh"
OUT=${OUT:-/tmp}
case ${PART:?PART=1, 2 or 3} in
1)
  OUT=$OUT bash "$here/final_checks_h200.sh" target/mg
  L=target/mg/layers
  {
    for w in 4096x7168 5120x1728; do
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 250 compute-sanitizer --tool racecheck --target-processes all --kernel-name kns=symm_matmul \
        target/mg/symm-launch -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,16
    done
  } 2>&1 | tee "$OUT/racecheck.log"
  ;;
2)
  [ -d target/g6 ] || tar xJf target/g6.tar.xz
  OUT=$OUT bash "$here/shared_gpu_checks.sh" target/g6 "2 4 8" apps
  mv "$OUT/shared_gpu_checks.log" "$OUT/tp_measured.log"
  SYMM_MATMUL=generated TOKENS=1,2,5,16,17,33 OUT=$OUT bash "$here/shared_gpu_checks.sh" target/g6 "2 4 8" apps
  mv "$OUT/shared_gpu_checks.log" "$OUT/tp_generated.log"
  ;;
3)
  [ -d target/g6 ] || tar xJf target/g6.tar.xz
  OUT=$OUT bash "$here/shared_gpu_checks.sh" target/g6 "2 4 8" "tests errors"
  ;;
esac
