#!/bin/bash
# The fused RMSNorm's structure on 2x H200, in one device call: the
# runtime's benchmark with the hand-generated PTX (before, 548164b) and
# two builds of this tree's kernels that differ only in `kernel_ir::HELD`
# (vectors a thread keeps in registers between the sum of squares and the
# normalization: 0 rereads the row, 1 holds one vector and loads gamma
# once), rounds interleaved; then the GPU tests of the HELD=1 build.
# Binaries in $B: bench-held0, bench-held1, symm-allreduce-bench-before,
# symm-gpu-tests, symm-launch.
cd "$(dirname "$0")/../.."
B=${B:-target/probe}
source bench/device/lib.sh
{
  date -u
  for round in 1 2 3; do
    for variant in before held0 held1; do
      bin=$B/bench-$variant
      [ $variant = before ] && bin=$B/symm-allreduce-bench-before
      echo "== $variant, round $round"
      $B/symm-launch -n 2 $bin 2>&1 | sed 's/^\[rank 0\] //' | tee -a "$OUT/runtime-$variant.jsonl"
    done
  done
} 2>&1 | tee "$OUT/probe-bench.log"
run $B/symm-launch -n 2 $B/symm-gpu-tests 2>&1 | tee "$OUT/probe-tests.log"
