#!/usr/bin/env bash
# Session 28, one H200: the tensor-core pair's RMSNorm prologue staged
# column by column (gemv_mma.rs `stage_scaled_columns`: a thread loads the
# norm weight's piece once and its piece of every row at once; the rows'
# statistic parts meet in shared memory in warp order), where a warp per
# row read its row and the whole norm weight piece after piece. A
# timing-only probe (nostage_probe_h200.sh) put the prologue at 2.7 µs of
# the MLP block's wall at 16 rows.
#   checks  the MLP block at five widths forced generated at the dispatch
#           edges and measured, TP 2 and 4 with ranks sharing the GPU; the
#           C++ apps; memcheck and racecheck on mma16; ptxas on the pair.
#   timing  the block before (libmlp_old: the s28 compiler) and after,
#           kernels per call in a CUDA graph on 3 weight copies, forced
#           generated, 2 / 8 / 16 rows, two rounds.
#   (here)   with column_stage.patch applied (tried and dropped: not in the tree),
#            WIDTHS="4096x7168 3072x8192 5120x1728 2064x1000 8192x3584" TP_WORLDS="2 4"
#            bench/device/matmul_build.sh target/s29; libmlp_old.so is the same block built
#            without the patch; ptx/mlp.ptx is symm-compile --emit=ptx of the world-1 block
#   (device) bash bench/device/column_stage_h200.sh target/s29
set -uo pipefail
B=${1:?usage: column_stage_h200.sh BUILD}
. "$(dirname "$0")/lib.sh"
ALL_PARTS="checks timing"
layer_checks_setup
if part checks; then
  {
    for w in 4096x7168 3072x8192 5120x1728 2064x1000 8192x3584; do
      SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,4,5,8,9,15,16,17
    done
    run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,2,8,9,16,17,64
    for world in 2 4; do
      for w in 4096x7168 5120x1728; do
        SYMM_MATMUL=generated run tp_py "$world" "$L/libmlp_tp${world}_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,9,16,17
      done
    done
    llama_apps
    ptxas_resources 'symm_matmul_0_mma16' "$B/ptx/mlp.ptx"
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  sanitize_layers mma16 2,16 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASS|FAIL|exit status" | tee "$OUT/sanitize.log"
  tally checks "$OUT/checks.log"
fi
if part timing; then
  for round in 1 2; do
    for v in old 4096x7168; do
      echo "== $v round $round"
      SYMM_MATMUL=generated py "$L/libmlp_$v.so" 4096 7168 --tokens 16 --profile 2,8,16 --profile-copies 3 2>&1 | grep -E "us wall|us x1"
    done
  done 2>&1 | tee "$OUT/timing.log"
fi
