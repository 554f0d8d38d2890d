#!/bin/bash
# Issue 16, second call: token counts that differ across ranks, and
# racecheck and synccheck over the runtime's GPU tests.
cd "$(dirname "$0")/../.."
B=${B:-target/issue12}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 PYTHONUNBUFFERED=1
run() { echo "== $*"; "$@"; echo "exit status $?"; }
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
  python3 bench/model/reference.py --out /tmp/llama --m 16 32
  echo "== token counts that differ across ranks (16, 32)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --skewed-tokens
  for tool in racecheck synccheck; do
    run timeout 240 $B/symm-launch -n 2 compute-sanitizer --tool $tool --error-exitcode 9 \
      $B/symm-gpu-tests
  done
} 2>&1 | tee "$OUT/issue16b.log"
