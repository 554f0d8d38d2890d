#!/bin/bash
# Issue 16 on 2x H200, in one device call: faults in compiled programs (a
# peer that dies inside a compiled call, a late peer, token counts that
# differ across ranks, a world size the program was not compiled for), the
# soak (10^6 barriers, 10^5 compiled calls with changing arguments, memory
# flat) and compute-sanitizer over a compiled layer and the runtime's GPU
# tests. Binaries from bench/model/build_apps.sh target/issue12 (carried).
cd "$(dirname "$0")/../.."
source bench/device/lib.sh
{
  date -u
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  python3 bench/model/reference.py --out /tmp/llama --m 16 32
  echo "== a peer dies inside a compiled call (timeout 5 s)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --die-after=3
  echo "== a peer 1 s late (timeout 5 s)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --late-ms=1000
  echo "== token counts that differ across ranks (16, 32)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --skewed-tokens
  run $B/symm-launch -n 1 $B/llama_attn_out /tmp/llama --tokens=16
  echo "== soak"
  SYMM_BARRIERS=1000000 run $B/symm-launch -n 2 $B/symm-gpu-tests barrier-100k
  run $B/symm-launch -n 2 $B/llama_attn_out /tmp/llama --soak=100000
  for tool in memcheck racecheck synccheck; do
    run timeout 150 $B/symm-launch -n 2 compute-sanitizer --tool $tool --error-exitcode 9 \
      $B/llama_attn_out /tmp/llama --tokens=16 --iterations=2
  done
  run timeout 200 $B/symm-launch -n 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
    $B/symm-gpu-tests
} 2>&1 | tee "$OUT/issue16.log"
