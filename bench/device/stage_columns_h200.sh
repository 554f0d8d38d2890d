#!/usr/bin/env bash
# Issue 32, session 40 (one H200): the `_norm_in_loop` twin (the pair's
# RMSNorm applied in the loop at 9-16 rows) reading the norm weight's four
# elements a step from shared memory, staged with the rows (`stage`),
# against reading them from global memory each step (HEAD: `mlp0`); and the
# generated matmuls alone (programmatic launch off) beside cuBLAS's.
# Build (SYMM_EXP_STAGE_COLUMNS is read by symm-compile; scratch):
#   SYMM_EXP_STAGE_COLUMNS=1 WIDTHS="4096x7168 2064x1000 3584x9472 5120x1728" TP_WORLDS=2 \
#     DECODER_WIDTHS=4096x2048x7168 GELU_WIDTHS=4096x14336 LAYER_FLAGS="--chip sm_90a" \
#     bench/device/matmul_build.sh target/sc
#   WIDTHS=4096x7168 LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/sc0
#   then target/sc0's libmlp_4096x7168.so as target/sc/layers/libmlp0_4096x7168.so, the apps
#   as target/sc/apps.tar.xz, symm-gpu-tests dropped (the carry limit).
# PARTS:
#   timing   kernels per call in a CUDA graph, world size 1, 3 weight copies,
#            forced generated, the two builds taking turns, three rounds
#   alone    the same at 16 rows with programmatic launch off (each kernel's
#            span its own), generated (both builds, and the decoder's pair,
#            which has no prologue) and cuBLAS (SYMM_MATMUL=library)
#   checks   against torch's f32 reference (forced generated at 1-17 rows at
#            four widths, measured, the GELU block, TP 2 sharing the GPU,
#            the decoder)
#   sanitize memcheck and racecheck on the generated matmuls at 9 and 16 rows
#   apps     the C++ apps at 9, 16 and 17 tokens
#   bash bench/device/stage_columns_h200.sh target/sc
B=${1:-target/sc}
ALL_PARTS="timing alone checks sanitize apps"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in 1 2 3; do
    for v in mlp0 mlp; do
      echo "== $v 4096x7168 round $round"
      SYMM_MATMUL=generated run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 2,9,12,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part alone; then
  for round in 1 2; do
    for v in mlp0 mlp; do
      echo "== generated $v round $round"
      SYMM_MATMUL=generated SYMM_PDL=0 run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 16 --profile-copies 3
    done
    echo "== library round $round"
    SYMM_MATMUL=library SYMM_PDL=0 run py "$L/libmlp_4096x7168.so" 4096 7168 --profile 16 --profile-copies 3
    echo "== decoder generated round $round"
    SYMM_MATMUL=generated SYMM_PDL=0 dec_py dec_4096x2048x7168 4096x2048x7168 --profile 16 --profile-copies 3
  done 2>&1 | grep -v Warning | tee "$OUT/alone.log"
fi
if part checks; then
  {
    for w in 4096x7168 2064x1000 3584x9472 5120x1728; do
      SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,8,9,13,16,17
    done
    run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,9,16,17,128,2048
    SYMM_MATMUL=generated run py "$L/libgelu_4096x14336.so" 4096 14336 --gelu --tokens 2,9,16,17
    for w in 4096x7168 2064x1000 5120x1728; do
      SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 2,9,16,17
    done
    run tp_py 2 "$L/libmlp_tp2_4096x7168.so" 4096 7168 --tokens 9,16,128
    SYMM_MATMUL=generated run tp_py 2 "$L/libgelu_tp2_4096x14336.so" 4096 14336 --gelu --tokens 9,16
    SYMM_MATMUL=generated dec_py dec_4096x2048x7168 4096x2048x7168 --tokens 1,9,16,17
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  for tool in memcheck racecheck; do
    for w in 4096x7168 5120x1728; do
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 280 compute-sanitizer --tool $tool --target-processes all --kernel-name kns=symm_matmul \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 9,16
    done
  done 2>&1 | grep -v Warning | tee "$OUT/sanitize.log"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$OUT/sanitize.log"
fi
if part apps; then
  apps_checks 9,16,17 9,16,17 2>&1 | grep -v Warning | tee "$OUT/apps.log"
  tally apps "$OUT/apps.log"
fi
