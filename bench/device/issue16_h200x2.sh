#!/bin/bash
# Issue 16 on 2x H200, in one device call: faults in compiled programs (a
# peer that dies inside a compiled call, a late peer, token counts that
# differ across ranks, a world size the program was not compiled for), the
# soak (10^6 barriers, 10^5 compiled calls with changing arguments, memory
# flat) and compute-sanitizer over a compiled layer and the runtime's GPU
# tests. Binaries from bench/model/build_apps.sh target/issue12 (carried).
cd "$(dirname "$0")/../.."
B=${B:-target/issue12}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONUNBUFFERED=1
run() { echo "== $*"; "$@"; echo "exit status $?"; }
# Two ranks without a launcher, which would stop the survivors of a death.
ranks() {
  local port=$((29000 + RANDOM % 1000)) start=$SECONDS
  for r in 0 1; do
    (RANK=$r WORLD_SIZE=2 LOCAL_RANK=$r MASTER_ADDR=127.0.0.1 MASTER_PORT=$port "$@"; \
      echo "exit status $? after $((SECONDS - start)) s") 2>&1 | sed "s/^/[rank $r] /" &
  done
  wait
}
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
