#!/usr/bin/env bash
# Issue 32, session 20, one H200: a lone matmul's fusions (the non-gated
# MLP of bench/model/gelu_mlp.mlir: RMSNorm as the up projection's
# prologue, GELU as its epilogue), against torch's f32 reference at five
# widths, world size 1 and TP 2 / 4 with ranks sharing the GPU; then
# compute-sanitizer on the fused kernels; then kernels per call in a CUDA
# graph against the previous compiler's build (no fusion: the norm, the
# GEMV and GELU as three kernels), two rounds.
#   (here)   WIDTHS=" " GELU_WIDTHS="4096x7168 4096x11008 2048x5632 5120x1728 1000x2064" \
#              TP_WORLDS="2 4" bash bench/device/matmul_build.sh target/tg
#            (+ layers/libgelu_old_<w>.so: the same sources by the previous compiler)
#            (cd target && tar -cJf tg.tar.xz tg)
#   (device) tar -xJf target/tg.tar.xz -C target && bash bench/device/gelu_h200.sh target/tg [PARTS]
# PARTS: "checks sanitizer speed" unless given.
set -uo pipefail
B=${1:?usage: gelu_h200.sh BUILD_DIR [PARTS]}
parts=" ${2:-checks sanitizer speed} "
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=30
L=$B/layers
WIDTHS=${WIDTHS:-4096x7168 4096x11008 2048x5632 5120x1728 1000x2064}
check() { tp_py "$@" --gelu; } # world layer D F [options]
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
if [[ $parts == *" checks "* ]]; then
  for w in $WIDTHS; do
    for way in generated measured; do
      SYMM_MATMUL=$way run check 1 "$L/libgelu_$w.so" "${w%x*}" "${w#*x}" \
        --tokens 1,2,3,7,8,9,15,16,17,33,64,65,128,129,300,2048
    done
    for world in 2 4; do
      SYMM_MATMUL=generated run check "$world" "$L/libgelu_tp${world}_$w.so" "${w%x*}" "${w#*x}" \
        --tokens 1,3,9,16,17,65,129,2048
    done
  done 2>&1 | tee "$OUT/gelu_checks.log"
  tally checks "$OUT/gelu_checks.log"
fi
if [[ $parts == *" sanitizer "* ]]; then
  for tool in memcheck racecheck; do
    SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 280 compute-sanitizer --tool $tool --target-processes all --kernel-name "kns=symm_matmul_0" \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libgelu_4096x7168.so" 4096 7168 --gelu --tokens 1,2,16,17
  done 2>&1 | tee "$OUT/gelu_sanitizer.log"
fi
if [[ $parts == *" speed "* ]]; then
  for round in 1 2; do
    for w in 4096x7168 4096x11008; do
      for lib in gelu gelu_old; do
        for way in generated measured; do
          echo "== $lib $w $way round $round"
          SYMM_MATMUL=$way SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
            run timeout 200 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/lib${lib}_$w.so" \
            "${w%x*}" "${w#*x}" --gelu --tokens 1,16 --profile 1,4,16
        done
      done
    done
  done 2>&1 | tee "$OUT/gelu_speed.log"
fi
