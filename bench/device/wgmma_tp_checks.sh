#!/usr/bin/env bash
# Issue 32, session 16, one GPU: the wgmma builds of the Llama apps at TP 4
# and 8 with the ranks sharing the GPU (symm-launch --gpus 1), against
# torch's f32 reference, measured and forced generated, at 1, 17, 64 and
# 128 tokens (a correctness check: the ranks take turns, times mean
# nothing).
#   (device) bash bench/device/wgmma_tp_checks.sh target/tp
set -uo pipefail
B=${1:?usage: wgmma_tp_checks.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
export SYMM_TIMEOUT_S=30
run python3 bench/model/reference.py --out /tmp/ref --m 1 17 64 128
for world in 4 8; do
  for layer in llama_mlp llama_decoder; do
    for way in measured generated; do
      SYMM_MATMUL=$way run timeout 240 "$B/symm-launch" -n "$world" --gpus 1 "$B/w$world/$layer" /tmp/ref \
        --tokens=1,17,64,128 --iterations=1
    done
  done
done
