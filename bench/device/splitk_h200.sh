#!/usr/bin/env bash
# Split-K prologue (symm-mem-split-k) on one GPU: the Llama MLP block at
# world size 1 (the full width, F = 14336, so its down projection is
# M x 14336 @ 14336 x 4096), compiled with the split (default) and without
# (--split-k-max-rows=0), checked against torch's f32 reference at token
# counts on both sides of every boundary (64: Lamport to one-shot, 128/129:
# split to whole), then timed interleaved, two rounds each.
#
#   build (here): target/sN/llama_mlp_w1_{split,nosplit} from
#     sed 's/world_size(2)/world_size(1)/; s/7168/14336/g' examples/llama_mlp.mlir
#     with examples/cpp/llama_mlp.cpp, plus symm-launch and symm-gpu-tests
#   (device) bash bench/device/splitk_h200.sh target/sN
set -uo pipefail
B=${1:?usage: splitk_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=10
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 64 65 100 128 129 256 2048
  for v in split nosplit; do
    run timeout 200 "$B/symm-launch" -n 1 "$B/llama_mlp_w1_$v" /tmp/ref --tokens=1,16,64,65,100,128,129,256,2048
  done
  SYMM_CUDA_GRAPHS=0 run timeout 200 "$B/symm-launch" -n 1 "$B/llama_mlp_w1_split" /tmp/ref --tokens=1,16,100,129
} 2>&1 | tee "$OUT/checks.log"
for round in 1 2; do
  for v in split nosplit; do
    echo "== $v (round $round)"
    timeout 200 "$B/symm-launch" -n 1 "$B/llama_mlp_w1_$v" /tmp/ref --tokens=1,16,128,2048 2>&1 | grep TIME
  done
done 2>&1 | tee "$OUT/timing.log"
