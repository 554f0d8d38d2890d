#!/bin/bash
# Issue 13 on 2x H200, in one device call: the kernels that are now IR over
# the symm_mem device ops, checked and timed. Both Llama layers (C++, Rust)
# at M = 1..2048 against torch's f32 reference, the large tp_mlp (push
# two-shot kernels with the fused epilogue), planted faults and a peer that
# dies inside a compiled call (the timeout and error flag now come from the
# pool's descriptor), compute-sanitizer over a compiled layer, the
# hand-written reduce-scatter, the runtime's GPU tests; then the compiled
# all-reduce before (kernels as MLIR text) and after (device-op IR),
# interleaved twice, beside the runtime's benchmark and torch's anchor.
# Binaries from bench/device/issue13_build.sh target/issue13 (carried).
# With the argument `bench`, only the timings.
cd "$(dirname "$0")/../.."
B=${B:-target/issue13}
source bench/device/lib.sh
[ "$1" = bench ] || {
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 bench/model/reference.py --out /tmp/llama --m 1 16 32 128 2048
  run $B/symm-launch -n 2 $B/llama_mlp /tmp/llama
  run $B/symm-launch -n 2 $B/llama_mlp_rust /tmp/llama
  run $B/symm-launch -n 2 $B/llama_attn_out /tmp/llama
  run $B/symm-launch -n 2 $B/tp_mlp
  run $B/symm-launch -n 2 $B/tp_mlp_large
  run $B/symm-launch -n 2 $B/reduce_scatter
  run $B/symm-launch -n 2 $B/llama_mlp /tmp/llama --plant-fault=sync
  run $B/symm-launch -n 2 $B/llama_mlp /tmp/llama --plant-fault=async
  echo "== a peer dies inside a compiled call (timeout 5 s)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --die-after=3
  echo "== a peer 1 s late (timeout 5 s)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --late-ms=1000
  run timeout 150 $B/symm-launch -n 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
    $B/llama_attn_out /tmp/llama --tokens=16 --iterations=2
  run timeout 150 $B/symm-launch -n 2 compute-sanitizer --tool racecheck --error-exitcode 9 \
    $B/llama_attn_out /tmp/llama --tokens=16 --iterations=2
  run $B/symm-launch -n 2 $B/symm-gpu-tests
} 2>&1 | tee "$OUT/issue13.log"
{
  date -u
  for round in 1 2; do
    echo "== compiled all-reduce, kernels as MLIR text (before), round $round"
    $B/symm-launch -n 2 $B/compiled_ar_before 2>&1 | sed 's/^\[rank 0\] //' | tee "$OUT/ar-before-$round.jsonl"
    echo "== compiled all-reduce, kernels as device-op IR (after), round $round"
    $B/symm-launch -n 2 $B/compiled_ar 2>&1 | sed 's/^\[rank 0\] //' | tee "$OUT/ar-after-$round.jsonl"
  done
  echo "== runtime all-reduce"
  $B/symm-launch -n 2 $B/symm-allreduce-bench 2>&1 | sed 's/^\[rank 0\] //' | tee "$OUT/ar-runtime.jsonl"
  echo "== torch anchor"
  torchrun --nproc_per_node=2 $B/anchors/torch_allreduce_bench.py 2>/dev/null | tee "$OUT/ar-torch.jsonl"
} 2>&1 | tee "$OUT/issue13-bench.log"
