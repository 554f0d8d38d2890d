#!/usr/bin/env bash
# Issue 32, session 41, call 4 (one H200): which way the measured choice
# takes the wide blocks of call 3 with the committed streamed-norm kernel
# (target/s43's `_u` layers = 145965a's compiler), beside cuBLAS's way
# forced, so that call 3's gains are read against what users run.
#   bash bench/device/s44_h200.sh target/s43
B=${1:-target/s43}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
for w in 8192x3584 8192x14336 6656x8960; do
  for way in library measured generated; do
    echo "== $w $way"
    SYMM_LOG=info SYMM_MATMUL=$way run py "$L/libmlp_${w}_u.so" "${w%x*}" "${w#*x}" --profile 2,16 --profile-copies 3
  done
done 2>&1 | grep -v Warning | tee "$OUT/choice.log"
