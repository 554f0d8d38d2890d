#!/usr/bin/env bash
# Issue 32, session 40, the closing call (one H200): the committed compiler
# (e6a4c78: the `_norm_in_loop` twin with the norm weight staged, taking
# calls of 2 to 16 rows where its grid is full) against the one before
# (530463b's kernels: `mlp0`, `gelu0`), and its checks. Build:
#   WIDTHS="4096x7168 3072x8192 5120x1728 2064x1000 8192x3584" TP_WORLDS="2 4" \
#     DECODER_WIDTHS=4096x2048x7168 GELU_WIDTHS=4096x14336 LAYER_FLAGS="--chip sm_90a" \
#     bench/device/matmul_build.sh target/fin
#   then 530463b's libmlp_4096x7168.so and libgelu_4096x14336.so (the same flags) as
#   target/fin/layers/lib{mlp0,gelu0}_*.so, the apps as target/fin/apps.tar.xz, symm-gpu-tests
#   dropped (the carry limit).
# PARTS:
#   timing   kernels per call in a CUDA graph, world size 1, 3 weight copies,
#            forced generated, the two compilers taking turns
#   alone    programmatic launch off (each kernel's span its own) at 2 and
#            16 rows, generated (both compilers) and cuBLAS; the floor
#   checks   against torch's f32 reference: five widths at the dispatch
#            edges (8192/3584 streams its norm), measured at 1-2048, the
#            GELU block, TP 2 and 4 sharing the GPU, the decoder
#   sanitize memcheck and racecheck on the generated matmuls at 2, 9, 16 rows
#   apps     the C++ apps at 2, 9, 16 and 17 tokens
#   bash bench/device/stage_columns_final_h200.sh target/fin
B=${1:-target/fin}
ALL_PARTS="timing alone checks sanitize apps"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in 1 2 3; do
    for v in mlp0 mlp; do
      echo "== $v 4096x7168 round $round"
      SYMM_MATMUL=generated run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 2,4,8,9,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
  for round in 1 2; do
    for v in gelu0 gelu; do
      echo "== $v 4096x14336 round $round"
      SYMM_MATMUL=generated run py "$L/lib${v}_4096x14336.so" 4096 14336 --gelu --profile 2,8,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/gelu.log"
fi
if part alone; then
  floor_read 2>&1 | tee "$OUT/floor.log"
  for round in 1 2; do
    for way in "generated mlp0" "generated mlp" "library mlp"; do
      set -- $way
      echo "== $1 $2 round $round"
      SYMM_MATMUL=$1 SYMM_PDL=0 run py "$L/lib$2_4096x7168.so" 4096 7168 --profile 2,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/alone.log"
fi
if part checks; then
  {
    five_width_checks
    run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,9,16,17,128,2048
    SYMM_MATMUL=generated run py "$L/libgelu_4096x14336.so" 4096 14336 --gelu --tokens 2,5,8,9,16,17
    for w in 4096x7168 2064x1000 5120x1728; do
      SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 2,5,9,16,17
      SYMM_MATMUL=generated run tp_py 4 "$L/libmlp_tp4_$w.so" "${w%x*}" "${w#*x}" --tokens 2,9,16
    done
    run tp_py 2 "$L/libmlp_tp2_4096x7168.so" 4096 7168 --tokens 2,9,16,128
    SYMM_MATMUL=generated run tp_py 2 "$L/libgelu_tp2_4096x14336.so" 4096 14336 --gelu --tokens 2,9,16
    SYMM_MATMUL=generated dec_py dec_4096x2048x7168 4096x2048x7168 --tokens 1,2,9,16,17
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  SANITIZE_KERNELS=symm_matmul SANITIZE_TOKENS=2,9,16 sanitize_mma "memcheck racecheck" "4096x7168 5120x1728" \
    2>&1 | tee "$OUT/sanitize.log"
fi
if part apps; then
  apps_checks 2,9,16,17 2,9,16,17 2>&1 | grep -v Warning | tee "$OUT/apps.log"
  tally apps "$OUT/apps.log"
fi
