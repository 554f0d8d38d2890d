#!/usr/bin/env bash
# Issue 32, session 36: split_rows_build.sh's blocks (default, _k64, _k0) at
# TP 2 with both ranks sharing GPU 0, against torch's f32 reference, at the
# split-K edges (64/65, 128/129 rows) and between. One GPU.
#   bash bench/device/split_rows_checks.sh target/sr
B=${1:-target/sr}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
{
  for w in ${SPLIT_WIDTHS:-4096x7168 5120x6912 3584x9472}; do
    for v in "" _k64 _k0; do
      run tp_py 2 "$L/libmlp_tp2_$w$v.so" "${w%x*}" "${w#*x}" --tokens 1,16,64,65,96,128,129
    done
  done
} 2>&1 | grep -v Warning | tee "$OUT/split_rows_checks.log"
tally split_rows "$OUT/split_rows_checks.log"
