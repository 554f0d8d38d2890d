#!/usr/bin/env bash
# Runs prologue_copies_build.sh's build on one H200:
#   1. against torch's f32 reference, forced generated, with 2 copied steps:
#      the MLP block at four widths at every GEMV dispatch edge, TP 2 with
#      the ranks sharing the GPU, and the C++ app at TP 2 sharing it;
#   2. memcheck and racecheck on the tensor-core GEMVs (2 copied steps);
#   3. kernels per call of the 4096/7168 block with 0-3 copied steps, 3
#      weight copies in turn, programmatic launch on, two rounds.
#   (device) bash bench/device/prologue_copies_h200.sh target/cp
B=${1:-target/cp}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
edges=1,2,7,8,9,15,16,17
{
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens "$edges"
  done
  for w in 4096x7168 2064x1000; do
    run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 1,9,16,17
  done
  run python3 bench/model/reference.py --out /tmp/ref --m 1 9 16 17
  for way in measured generated; do
    SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,9,16,17 --iterations=5
  done
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
{
  for w in 4096x7168 2064x1000; do
    for tool in memcheck racecheck; do
      SYMM_MATMUL=generated SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
        timeout 150 compute-sanitizer --tool $tool --target-processes all --kernel-name kns=mma \
        "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" \
        --tokens 2,16 2>&1 | grep "SUMMARY\|Internal\|PASS\|FAIL\|rror" | sort | uniq -c | cut -c1-200
      echo "== $tool $w done"
    done
  done
} 2>&1 | tee "$OUT/sanitize.log"
for round in 1 2; do
  for c in ${COPIES:-0 1 2 3}; do
    echo "== c$c round $round"
    SYMM_MATMUL=generated py "$L/libc$c.so" 4096 7168 --tokens 2,16 --profile 2,8,16 --profile-copies 3 2>&1 \
      | grep -E "PASS|FAIL|us wall|mma16"
  done
done 2>&1 | tee "$OUT/timing.log"
