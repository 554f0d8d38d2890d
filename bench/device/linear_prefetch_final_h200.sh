#!/usr/bin/env bash
# Session 23, one H200: the final build of the n x k lone matmul's L2
# prefetch (SINGLE_LINEAR 8 steps, SINGLE_MMA_LINEAR 4 iterations).
# Checks at five widths (linear_mma_h200.sh's), compute-sanitizer memcheck
# and racecheck on the lone matmul's GEMVs (symm_matmul_1_*: gemv1, mma8,
# mma16) at 1, 5 and 16 rows (exact and guarded tilings), kernels per call
# in a CUDA graph beside the previous commit's build (liblinear_head.so),
# and ncu on the pairs' mma16 at 16 rows (n x k against row-major).
#   (here)   WIDTHS=4096x7168 LINEAR_WIDTHS="4096x7168 3072x8192 2064x1000 5120x1728 1000x2064" \
#              MERGED_WIDTHS="4096x7168 2064x1000" TP_WORLDS="2 4" bash bench/device/matmul_build.sh target/lm,
#            plus liblinear_few_4096x7168.so (--matmul-gemv-max-rows 4) and liblinear_head.so
#            (the previous commit's symm-compile) of linear_mlp.mlir at world size 1
#   (device) bash bench/device/linear_prefetch_final_h200.sh target/lm [PARTS]
set -uo pipefail
B=${1:?usage: linear_prefetch_final_h200.sh BUILD_DIR [PARTS]}
parts=" ${2:-checks sanitizer speed ncu} "
. "$(dirname "$0")/lib.sh"
layer_checks_setup
if [[ $parts == *" checks "* ]]; then
  bash "$(dirname "$0")/linear_mma_h200.sh" "$B" checks
  for w in 4096x7168 2064x1000; do
    SYMM_MATMUL=generated run py "$L/libmerged_$w.so" "${w%x*}" "${w#*x}" --merged --tokens 1,2,9,16,17
    SYMM_MATMUL=generated run tp_py 2 "$L/libmerged_tp2_$w.so" "${w%x*}" "${w#*x}" --merged --tokens 1,2,16
  done 2>&1 | tee "$OUT/merged_checks.log"
  tally merged "$OUT/merged_checks.log"
fi
if [[ $parts == *" sanitizer "* ]]; then
  for tool in memcheck racecheck; do
    for w in 4096x7168 2064x1000; do
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 250 compute-sanitizer --tool $tool --target-processes all --kernel-name "kns=symm_matmul_1" \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/liblinear_$w.so" "${w%x*}" "${w#*x}" \
        --linear --tokens 1,5,16
    done
  done 2>&1 | tee "$OUT/linear_prefetch_sanitizer.log"
fi
if [[ $parts == *" speed "* ]]; then
  for round in 1 2; do
    for v in linear_head linear_4096x7168; do
      echo "== $v round $round"
      SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --linear --tokens 2 --profile 1,2,8,16
    done
  done 2>&1 | tee "$OUT/linear_prefetch_speed.log"
fi
if [[ $parts == *" ncu "* ]]; then
  for v in "liblinear_4096x7168.so --linear" "libmlp_4096x7168.so"; do
    set -- $v
    echo "== ncu $1 pair mma16, 16 rows"
    SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      timeout 200 ncu --kernel-name regex:symm_matmul_0_mma16 --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats \
      --section Occupancy --section LaunchStats --section SchedulerStats \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/$1" 4096 7168 ${2:-} --tokens 16
  done 2>&1 | tee "$OUT/linear_pair_ncu.log"
fi
