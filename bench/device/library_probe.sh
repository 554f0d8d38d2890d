#!/bin/bash
# Follow-up of library_h200x2.sh: the GPU tests again (a buffer's first
# collective inside a graph capture), then whether the library's 128 B
# graph time is the size or its place as the first graph of the process
# (the after binary with sizes reordered: 8 KB first, then 128 B twice),
# and three more interleaved rounds of the default order.
cd "$(dirname "$0")/../.."
B=${B:-target/library}
source bench/device/lib.sh
{
  run $B/symm-launch -n 2 $B/symm-gpu-tests
} 2>&1 | tee "$OUT/probe.log"
{
  for round in 1 2; do
    echo "== after, sizes 8 KB, 128 B, 128 B, round $round"
    SYMM_BENCH_NUMELS=4096,64,64 $B/symm-launch -n 2 $B/symm-allreduce-bench 2>&1 | sed 's/^\[rank 0\] //' | grep numel
  done
  for round in 3 4 5; do
    echo "== before round $round"
    $B/symm-launch -n 2 $B/symm-allreduce-bench-before 2>&1 | sed 's/^\[rank 0\] //' | tee -a "$OUT/runtime-before.jsonl"
    echo "== after round $round"
    $B/symm-launch -n 2 $B/symm-allreduce-bench 2>&1 | sed 's/^\[rank 0\] //' | tee -a "$OUT/runtime-after.jsonl"
  done
} 2>&1 | tee "$OUT/probe-bench.log"
