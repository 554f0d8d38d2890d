#!/usr/bin/env bash
# Issue 32, session 7, one H200 (carried as target/s7.tar.xz: target/mg from
# `MMA_TILINGS=" " bench/device/mma_gemv_build.sh target/mg`, target/ab2
# from the prefetch variants, each the MLP block 4096/7168 at world size 1).
#   PART=1: the L2-prefetch A/B (staging_ab_h200.sh over target/ab2:
#           VARIANTS, first base e8 e16 s4 s8, then nopf new base), the
#           misaligned operands (each operand in turn 2 bytes past a 16-byte
#           boundary: refused with the argument named, the next call right;
#           the C++ app's planted fault), the four widths' checks
#           (final_checks_h200.sh's first part).
#   PART=2: the misaligned operands again (the Python layer now takes the
#           failure it raises, so the next call runs), final_checks_h200.sh's
#           apps, memcheck and racecheck at M = 1, 2, 16 on target/mg.
#
#   (device) PART=1 bash bench/device/session7_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
rm -rf target/mg target/ab2 && tar -xJf target/s7.tar.xz
export SYMM_TIMEOUT_S=20
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
L=target/mg/layers
misaligned() {
  {
    for w in 4096x7168 5120x1728; do
      SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 150 target/mg/symm-launch -n 1 python3 bench/model/matmul_check.py \
        "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,16,17 --misalign
    done
    run python3 bench/model/reference.py --out /tmp/ref --m 16
    run timeout 100 target/mg/symm-launch -n 1 target/mg/llama_mlp_w1 /tmp/ref --plant-fault=misaligned
  } 2>&1 | tee "$OUT/misaligned.log"
}
if [ "${PART:-1}" = 1 ]; then
  VARIANTS=${VARIANTS:-nopf new base} OUT=$OUT bash bench/device/staging_ab_h200.sh target/ab2
  misaligned
  PARTS=checks OUT=$OUT bash bench/device/final_checks_h200.sh target/mg
fi
if [ "${PART:-1}" = 2 ]; then
  misaligned
  PARTS="apps sanitizer" OUT=$OUT bash bench/device/final_checks_h200.sh target/mg
fi
