#!/usr/bin/env bash
# Issue 32, session 38 (one H200): the pair's RMSNorm applied in the loop of
# its tensor-core GEMV for calls of 9 to 16 rows (`_norm_in_loop`: rows
# staged raw, the column factors and the statistic's steps per fragment)
# against the pass over the rows before the loop. Build:
#   WIDTHS="4096x7168 2064x1000 3584x9472 5120x1728" TP_WORLDS="2 4" \
#     GELU_WIDTHS="4096x14336" LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/nl
#   WIDTHS=4096x7168 LAYER_FLAGS="--chip sm_90a --no-matmul-norm-in-loop" \
#     bench/device/matmul_build.sh target/nl0
#   then target/nl0's libmlp_4096x7168.so as target/nl/layers/libmlp0_4096x7168.so,
#   and the apps llama_mlp_w1, llama_mlp_w2, llama_decoder_w2 as target/nl/apps.tar.xz
#   (the carry limit).
# PARTS:
#   timing   kernels per call in a CUDA graph at world size 1, 3 weight
#            copies, the two builds of the Llama-3-8B block taking turns
#   checks   against torch's f32 reference: forced generated at 1-17 rows
#            and measured, four widths (K = 2064 leaves a tail of the
#            tiling's steps), the non-gated GELU block (a lone matmul with
#            the norm), TP 2 and 4 with ranks sharing the GPU
#   sanitize compute-sanitizer memcheck and racecheck on the generated
#            matmul kernels at 9 and 16 rows
#   apps     the C++ apps against torch's f32 reference at 9-17 tokens
#   bash bench/device/norm_in_loop_h200.sh target/nl
B=${1:-target/nl}
ALL_PARTS="timing checks sanitize apps"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in 1 2 3; do
    for v in mlp0 mlp; do
      echo "== $v 4096x7168 round $round"
      run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 2,8,9,12,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
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
      SYMM_MATMUL=generated run tp_py 4 "$L/libmlp_tp4_$w.so" "${w%x*}" "${w#*x}" --tokens 9,16
    done
    run tp_py 2 "$L/libmlp_tp2_4096x7168.so" 4096 7168 --tokens 9,16,128
    SYMM_MATMUL=generated run tp_py 2 "$L/libgelu_tp2_4096x14336.so" 4096 14336 --gelu --tokens 9,16
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  for tool in memcheck racecheck; do
    for w in 2064x1000 4096x7168; do
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
