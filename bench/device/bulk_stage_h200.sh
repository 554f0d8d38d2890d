#!/usr/bin/env bash
# Issue 32, session 39 (one H200): the tensor-core GEMVs' raw staged rows of
# `a` brought by the copy engine (`--matmul-bulk-stage`: a bulk copy per row
# and loop iteration, each iteration's on its own mbarrier that the loop
# waits on) against their threads' loads and stores before the loop. Build:
#   WIDTHS="4096x7168 2064x1000 5120x1728 3584x9472" TP_WORLDS="2 4" \
#     DECODER_WIDTHS="4096x2048x7168" \
#     LAYER_FLAGS="--chip sm_90a --matmul-bulk-stage" bench/device/matmul_build.sh target/bk
#   WIDTHS=4096x7168 DECODER_WIDTHS="4096x2048x7168" LAYER_FLAGS="--chip sm_90a" \
#     bench/device/matmul_build.sh target/bk0
#   then target/bk0's libmlp_4096x7168.so and libdec_4096x2048x7168.so as
#   target/bk/layers/libmlp0_... and libdec0_..., and the apps as
#   target/bk/apps.tar.xz (the carry limit).
# PARTS: timing checks sanitize apps
#   bash bench/device/bulk_stage_h200.sh target/bk
B=${1:-target/bk}
ALL_PARTS="timing checks sanitize apps"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  # VARIANTS: the layers' prefixes (mlp0: threads' loads and stores; mlp:
  # the committed chunks; others: scratch builds' chunkings), decoders too.
  for round in 1 2 3; do
    for v in ${VARIANTS:-mlp0 mlp}; do
      echo "== $v 4096x7168 round $round"
      SYMM_MATMUL=generated run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 2,9,16 --profile-copies 3
    done
    for v in ${DEC_VARIANTS:-dec0 dec}; do
      echo "== $v 4096x2048x7168 round $round"
      SYMM_MATMUL=generated dec_py "${v}_4096x2048x7168" 4096x2048x7168 --profile 16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part checks; then
  {
    for w in 4096x7168 2064x1000 3584x9472 5120x1728; do
      SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,8,9,13,16,17
    done
    run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,9,16,17,128,2048
    SYMM_MATMUL=generated dec_py dec_4096x2048x7168 4096x2048x7168 --tokens 1,2,9,16,17
    for w in 4096x7168 2064x1000 5120x1728; do
      SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 2,9,16,17
      SYMM_MATMUL=generated run tp_py 4 "$L/libmlp_tp4_$w.so" "${w%x*}" "${w#*x}" --tokens 9,16
    done
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  for tool in memcheck racecheck synccheck; do
    for w in 4096x7168 2064x1000; do
      # (At 2064/1000 the down projection is cuBLAS's; a kernel filter
      # that leaves it out makes racecheck fault: instrument every kernel.)
      filter=(--kernel-name kns=symm_matmul)
      [[ $w == 2064x1000 ]] && filter=()
      SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 200 compute-sanitizer --tool $tool --target-processes all "${filter[@]}" \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 9,16
    done
  done 2>&1 | grep -v Warning | tee "$OUT/sanitize.log"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|exit status" "$OUT/sanitize.log"
fi
if part apps; then
  apps_checks 9,16,17 9,16,17 2>&1 | grep -v Warning | tee "$OUT/apps.log"
  tally apps "$OUT/apps.log"
fi
