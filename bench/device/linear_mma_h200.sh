#!/usr/bin/env bash
# Session 22, one H200: the tensor-core GEMV of weights stored n x k
# (passes/src/matmul/gemv_mma_linear.rs, calls of 2-16 rows) in the Llama
# MLP block of bench/model/linear_mlp.mlir. Checks against torch's f32
# reference at five widths (forced generated, then measured; world size 1,
# TP 2 and 4 with ranks sharing the GPU); compute-sanitizer memcheck and
# racecheck on the new kernels; then µs of kernels per call in a CUDA graph
# at 2, 8 and 16 rows: the default tiling and the variants of
# linear_mma_build.sh, generated, beside the same layer on cuBLAS
# (SYMM_MATMUL=library) and the row-major block, two rounds.
#   (here)   bash bench/device/linear_mma_build.sh target/lm && (cd target && tar -cJf lm.tar.xz lm)
#   (device) tar -xJf target/lm.tar.xz -C target && bash bench/device/linear_mma_h200.sh target/lm [PARTS]
# PARTS: "checks sanitizer speed" unless given.
set -uo pipefail
B=${1:?usage: linear_mma_h200.sh BUILD_DIR [PARTS]}
parts=" ${2:-checks sanitizer speed} "
. "$(dirname "$0")/lib.sh"
WIDTHS=${WIDTHS:-4096x7168 3072x8192 2064x1000 5120x1728 1000x2064}
PROFILE=${PROFILE:-2,8,16}
layer_checks_setup
if [[ $parts == *" checks "* ]]; then
  for w in $WIDTHS; do
    SYMM_MATMUL=generated run tp_py 1 "$L/liblinear_$w.so" "${w%x*}" "${w#*x}" --linear \
      --tokens 1,2,3,5,8,9,13,16,17,2048
    SYMM_LOG=info run tp_py 1 "$L/liblinear_$w.so" "${w%x*}" "${w#*x}" --linear --tokens 1,2,8,16,17
    for world in 2 4; do
      SYMM_MATMUL=generated run tp_py "$world" "$L/liblinear_tp${world}_$w.so" "${w%x*}" "${w#*x}" --linear \
        --tokens 1,2,7,16,2048
    done
  done 2>&1 | tee "$OUT/linear_mma_checks.log"
  SYMM_MATMUL=generated run py "$L/liblinear_few_4096x7168.so" 4096 7168 --linear --tokens 2,4,5,16 \
    2>&1 | tee -a "$OUT/linear_mma_checks.log"
  tally checks "$OUT/linear_mma_checks.log"
fi
if [[ $parts == *" sanitizer "* ]]; then
  for tool in memcheck racecheck; do
    for w in 4096x7168 2064x1000; do
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 250 compute-sanitizer --tool $tool --target-processes all --kernel-name "kns=mma16" \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/liblinear_$w.so" "${w%x*}" "${w#*x}" \
        --linear --tokens 5,16
    done
  done 2>&1 | tee "$OUT/linear_mma_sanitizer.log"
fi
if [[ $parts == *" speed "* ]]; then
  for round in 1 2; do
    for v in linear_4096x7168 $(cd "$L" && ls liblinear_m*.so 2>/dev/null | sed 's/^lib//; s/\.so$//'); do
      echo "== $v generated round $round"
      SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --linear --tokens 2 --profile "$PROFILE"
    done
    echo "== linear_4096x7168 library round $round"
    SYMM_MATMUL=library run py "$L/liblinear_4096x7168.so" 4096 7168 --linear --tokens 2 --profile "$PROFILE"
    echo "== mlp_4096x7168 generated round $round"
    SYMM_MATMUL=generated run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 2 --profile "$PROFILE"
  done 2>&1 | tee "$OUT/linear_mma_speed.log"
fi
