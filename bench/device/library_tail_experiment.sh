#!/bin/bash
# Whether the library's 1-4% below 2 MB comes from the tail code: the runtime
# benchmark before (hand-written PTX), after (generated, with a tail) and
# with whole-vector kernels generated without a tail (an uncommitted build:
# library.rs tail: false, the count passed in vectors), sizes up to 2 MB,
# three interleaved rounds.
source bench/device/lib.sh
B=target/library
for round in 1 2 3; do
  for v in before notail ""; do
    bin=$B/symm-allreduce-bench${v:+-$v}
    echo "== $bin round $round"
    SYMM_BENCH_NUMELS=64,4096,65536,262144,1048576 $B/symm-launch -n 2 $bin 2>&1 | sed 's/^\[rank 0\] //' | grep numel | tee -a "$OUT/exp-${v:-after}.jsonl"
  done
done
