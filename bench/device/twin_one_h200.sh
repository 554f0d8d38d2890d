#!/usr/bin/env bash
# Issue 32, session 40 (one H200; scratch): calls of one row of the pair
# (and of the GELU block's lone up projection) given to the `_norm_in_loop`
# twin (`mlp1`, `gelu1`: SYMM_EXP_TWIN_ONE at compile time, which drops the
# one-row CUDA-core GEMV where the twin takes 2-16 rows) against e6a4c78
# (`mlp`, `gelu`: the one-row GEMV). Build: target/t1x (e6a4c78's layers of
# target/fin beside those of the scratch build target/t1).
#   bash bench/device/twin_one_h200.sh target/t1x
B=${1:-target/t1x}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
for round in 1 2 3; do
  for v in mlp mlp1; do
    echo "== $v 4096x7168 round $round"
    SYMM_MATMUL=generated run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 1,2 --profile-copies 3
  done
done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
for round in 1 2; do
  for v in mlp mlp1; do
    echo "== $v 3072x8192 round $round"
    SYMM_MATMUL=generated run py "$L/lib${v}_3072x8192.so" 3072 8192 --profile 1 --profile-copies 3
  done
  for v in gelu gelu1; do
    echo "== $v 4096x14336 round $round"
    SYMM_MATMUL=generated run py "$L/lib${v}_4096x14336.so" 4096 14336 --gelu --profile 1 --profile-copies 3
  done
done 2>&1 | grep -v Warning | tee "$OUT/widths.log"
{
  for w in 4096x7168 3072x8192 2064x1000; do
    SYMM_MATMUL=generated run py "$L/libmlp1_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,3,16,17
  done
  SYMM_MATMUL=generated run py "$L/libgelu1_4096x14336.so" 4096 14336 --gelu --tokens 1,2,17
  SYMM_MATMUL=generated run tp_py 2 "$L/libmlp1_tp2_4096x7168.so" 4096 7168 --tokens 1,2,17
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
