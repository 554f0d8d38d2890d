#!/usr/bin/env bash
# The runtime library's Lamport all-reduce on 2x H200, one device call:
# the GPU tests (the all-reduce cases, now with sizes the Lamport kernel
# takes, the Lamport test, graph replay), a dead peer under both one-shots,
# compute-sanitizer memcheck over the Lamport test, then the library
# benchmark with the Lamport kernel (default) and without
# (SYMM_LAMPORT_MAX_BYTES=0, the staged one-shot), the compiled all-reduce
# and torch's anchor, interleaved twice.
#
#   cargo build --release -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher -p symm-bench --bins; copy
#   symm-gpu-tests, symm-allreduce-bench, symm-launch into target/l23, the
#   compiled all-reduce benchmark as compiled_ar_t128
#   (bench/device/lamport_threads_h200x2.sh), cp -r ../shared/anchors
#   (device) bash bench/device/library_lamport_h200x2.sh target/l23
set -uo pipefail
B=${1:?usage: library_lamport_h200x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export NVSHMEM_DISABLE_NVLS=1
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  run timeout 300 "$B/symm-launch" -n 2 "$B/symm-gpu-tests"
  echo "== a peer dies (staged, then Lamport)"
  SYMM_TIMEOUT_S=5 ranks timeout 60 "$B/symm-gpu-tests" dead-peer
  run timeout 300 "$B/symm-launch" -n 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
    "$B/symm-gpu-tests" lamport
  echo "== a malformed SYMM_LAMPORT_MAX_BYTES"
  SYMM_LAMPORT_MAX_BYTES=lots timeout 60 "$B/symm-launch" -n 2 "$B/symm-gpu-tests" lamport 2>&1 | tail -3
} 2>&1 | tee "$OUT/checks.log"
for round in 1 2; do
  timeout 120 "$B/symm-launch" -n 2 "$B/symm-allreduce-bench" 2>&1 | sed 's/^\[rank 0\] /lamport /' | grep "^lamport"
  SYMM_LAMPORT_MAX_BYTES=0 timeout 120 "$B/symm-launch" -n 2 "$B/symm-allreduce-bench" 2>&1 \
    | sed 's/^\[rank 0\] /staged /' | grep "^staged"
  timeout 120 "$B/symm-launch" -n 2 "$B/compiled_ar_t128" 2>&1 | sed 's/^\[rank 0\] /compiled /' | grep "^compiled"
  timeout 120 torchrun --nproc_per_node=2 "$B/anchors/torch_allreduce_bench.py" 2>/dev/null | sed "s/^/torch /"
done | tee "$OUT/allreduce.jsonl"
