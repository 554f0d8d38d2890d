#!/bin/bash
# Issue 16, second call: token counts that differ across ranks, and
# racecheck and synccheck over the runtime's GPU tests.
cd "$(dirname "$0")/../.."
source bench/device/lib.sh
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
