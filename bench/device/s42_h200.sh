#!/usr/bin/env bash
# Issue 32, session 41, call 2 (one H200): the committed 2-8 row staging of
# the pairs without a prologue (536e944) against the build before it
# (8374a49's decoder, `old`), and two scratch variants for one-row calls
# (bench/device/one_row.patch, read by symm-compile):
#   so: SYMM_EXP_SHORT_ONE=1, a short grid's single matmul (o_proj, TP 8's
#       down projection) takes the wgmma ring for one-row calls too;
#   pn: SYMM_EXP_PAIR_NO_GEMV1=1, a pair's one-row calls take its
#       tensor-core GEMV (the decoder's: mma16_staged) instead of gemv1;
#   b:  both.
# Build (HEAD with the patch applied):
#   export WIDTHS="4096x7168 4096x1792" TP_WORLDS=2 \
#     DECODER_WIDTHS="4096x2048x7168 4096x512x1792" LAYER_FLAGS="--chip sm_90a"
#   bench/device/matmul_build.sh target/s42a (then with each variable: s42so, s42pn, s42b)
#   target/s42 = s42a with the variants' layers as lib<name>_<v>.so and
#   8374a49's libdec_4096x2048x7168.so as libdec_4096x2048x7168_old.so;
#   symm-gpu-tests dropped, the apps in apps.tar.xz.
#   bash bench/device/s42_h200.sh target/s42
B=${1:-target/s42}
ALL_PARTS="timing checks sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in 1 2; do
    for v in _old "" _so _pn _b; do
      echo "== dec$v round $round"
      SYMM_MATMUL=generated dec_py "dec_4096x2048x7168$v" 4096x2048x7168 --profile 1,2,8,16 --profile-copies 3
    done
    for v in "" _so _pn _b; do
      echo "== dec8$v round $round"
      SYMM_MATMUL=generated dec_py "dec_4096x512x1792$v" 4096x512x1792 --profile 1,16 --profile-copies 3
    done
    for v in "" _so; do
      echo "== mlp8$v round $round"
      SYMM_MATMUL=generated run py "$L/libmlp_4096x1792$v.so" 4096 1792 --profile 1,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part checks; then
  {
    for v in _so _pn _b; do
      SYMM_MATMUL=generated dec_py "dec_4096x2048x7168$v" 4096x2048x7168 --tokens 1,2,3,8,9,16,17
      SYMM_MATMUL=generated dec_py "dec_4096x512x1792$v" 4096x512x1792 --tokens 1,2,9,16,17
      SYMM_MATMUL=generated run tp_py 2 "$L/libdec_tp2_4096x2048x7168$v.so" 4096 7168 --decoder 2048 --tokens 1,2,16
    done
    SYMM_MATMUL=generated run py "$L/libmlp_4096x1792_so.so" 4096 1792 --tokens 1,2,9,16,17
    SYMM_MATMUL=generated run tp_py 2 "$L/libdec_tp2_4096x2048x7168.so" 4096 7168 --decoder 2048 --tokens 1,2,5,8,9,16
    SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_4096x7168.so" 4096 7168 --tokens 1,2,8,16
    apps_checks 1,2,8,9,16,17 1,2,8,16,17
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  # The decoder half-layer's GEMVs: HEAD's staged pair at 2 and 8 rows,
  # the `b` variant's one-row kernels.
  san() { # tool kernels lib tokens
    SYMM_MATMUL=generated SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so \
      PYTHONPATH=python:bench/model timeout 150 compute-sanitizer --tool "$1" \
      --target-processes all --kernel-name "kns=$2" "$B/symm-launch" -n 1 \
      python3 bench/model/matmul_check.py "$L/$3.so" 4096 7168 --decoder 2048 --tokens "$4" 2>&1 \
      | grep "SUMMARY\|Internal\|PASS\|FAIL\|rror" | sort | uniq -c | cut -c1-200
    echo "== $1 $2 $3 $4 done"
  }
  {
    for tool in memcheck racecheck; do
      san $tool mma libdec_4096x2048x7168 2,8
      san $tool matmul libdec_4096x2048x7168_b 1
    done
  } 2>&1 | tee "$OUT/sanitize.log"
fi
