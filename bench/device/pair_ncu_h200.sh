#!/usr/bin/env bash
# Issue 32, session 38 (one H200): ncu with source counters (warp stall
# sampling per SASS instruction) on the MLP pair at 16 rows, its RMSNorm
# fused (def: mma16, the pass before the loop) and as its own kernels (sep:
# mma16_staged, no prologue); layers of sep_norm_h200.sh's build. Writes the
# details pages and the SASS source pages as CSV. KERNELS picks others, e.g.
# KERNELS="mlp_4096x7168:1_mma16_staged" on matmul_build.sh's layers.
B=${1:-target/exp1}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
ncu --version | tail -1
# KERNELS ("lib:kernel ...", kernel a symm_matmul_N_ suffix) replaces the two.
for v in ${KERNELS:-def:0_mma16 sep:0_mma16_staged}; do
  lib=${v%%:*} k=${v#*:} name=${v//:/_}
  SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 250 ncu --target-processes all --graph-profiling node --kernel-name regex:"symm_matmul_$k\$" --launch-skip 1 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section MemoryWorkloadAnalysis \
    -o "$OUT/$name" "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/lib$lib.so" 4096 7168 --tokens 16 \
    > "$OUT/$name.run.log" 2>&1
  tail -3 "$OUT/$name.run.log"
  ncu -i "$OUT/$name.ncu-rep" --page details > "$OUT/$name.details.txt" 2>&1
  ncu -i "$OUT/$name.ncu-rep" --page source --csv --print-source sass > "$OUT/$name.sass.csv" 2>&1
  rm -f "$OUT/$name.ncu-rep"
  grep -E "Duration|DRAM Throughput|Warp Cycles Per Issued" "$OUT/$name.details.txt" | head -20
done
