#!/usr/bin/env bash
# Session 21, one H200: the Llama MLP block with a merged gate_up weight in
# nn.Linear's layout (bench/model/merged_mlp.mlir: the gate and up halves
# are row ranges of one 2F x D weight, the up half at an offset) against
# torch's f32 reference at three widths, forced generated and measured,
# world size 1 and TP 2 / 4 with ranks sharing the GPU; memcheck on the
# GEMVs; µs of kernels per call in a CUDA graph, generated against cuBLAS.
#   (here)   WIDTHS=4096x7168 MERGED_WIDTHS="4096x7168 2064x1000 5120x1728" TP_WORLDS="2 4" \
#              bash bench/device/matmul_build.sh target/tm && (cd target && tar -cJf tm.tar.xz tm)
#   (device) tar -xJf target/tm.tar.xz -C target && bash bench/device/merged_h200.sh target/tm
set -uo pipefail
B=${1:?usage: merged_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
for w in 4096x7168 2064x1000 5120x1728; do
  SYMM_MATMUL=generated run tp_py 1 "$L/libmerged_$w.so" "${w%x*}" "${w#*x}" --merged --tokens 1,2,4,5,17,2048
  SYMM_LOG=info run tp_py 1 "$L/libmerged_$w.so" "${w%x*}" "${w#*x}" --merged --tokens 1,4,16,129
  for world in 2 4; do
    SYMM_MATMUL=generated run tp_py "$world" "$L/libmerged_tp${world}_$w.so" "${w%x*}" "${w#*x}" --merged \
      --tokens 1,3,2048
  done
done 2>&1 | tee "$OUT/merged_checks.log"
tally checks "$OUT/merged_checks.log"
SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  run timeout 250 compute-sanitizer --tool memcheck --target-processes all --kernel-name "kns=symm_matmul_" \
  "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmerged_4096x7168.so" 4096 7168 \
  --merged --tokens 1,4 2>&1 | tee "$OUT/merged_sanitizer.log"
for round in 1 2; do
  for way in generated library; do
    echo "== merged_4096x7168 $way round $round"
    SYMM_MATMUL=$way run py "$L/libmerged_4096x7168.so" 4096 7168 --merged --tokens 1 --profile 1
  done
done 2>&1 | tee "$OUT/merged_speed.log"
