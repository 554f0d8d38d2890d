#!/bin/bash
# Issue 16, third call (after the token-count agreement and the teardown
# order): the fault checks again, on the final binaries.
cd "$(dirname "$0")/../.."
source bench/device/lib.sh
{
  date -u
  [ -f /tmp/llama/attn_ref_residual_m32.bin ] || python3 bench/model/reference.py --out /tmp/llama --m 1 16 32 128 2048
  echo "== a peer dies inside a compiled call (timeout 5 s)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --die-after=3
  echo "== a peer 1 s late (timeout 5 s)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --late-ms=1000
  echo "== token counts that differ across ranks (16, 32)"
  SYMM_TIMEOUT_S=5 ranks $B/llama_attn_out /tmp/llama --skewed-tokens
  run $B/symm-launch -n 1 $B/llama_attn_out /tmp/llama --tokens=16
  run $B/symm-launch -n 2 compute-sanitizer --tool memcheck --error-exitcode 9 \
    $B/llama_mlp /tmp/llama --tokens=16 --iterations=2
} 2>&1 | tee "$OUT/issue16c.log"
