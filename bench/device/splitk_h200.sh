#!/usr/bin/env bash
# Split-K prologue (symm-mem-split-k) on one GPU: the Llama MLP block, the
# attention-output block (o_proj + all-reduce + residual + the next
# RMSNorm, the rows kernels) and the decoder layer's tensor-parallel half
# (both blocks, each all-reduce followed by a norm) at world size 1, compiled with the split
# (default), without (--split-k-max-rows=0) and with the split and the
# staged kernels forced (--lamport-max-bytes=0); checked against torch's f32
# reference at token counts on both sides of every boundary (32/33 and
# 64/65: Lamport, staged and barrier kernels; 128/129: split to whole),
# then timed interleaved, two rounds each.
#
#   (here)   bench/device/splitk_build_h200.sh target/sN
#   (device) bash bench/device/splitk_h200.sh target/sN
set -uo pipefail
B=${1:?usage: splitk_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=10
counts=1,16,32,33,64,65,100,128,129,256,2048
# The layers built into B (splitk_build_h200.sh's LAYERS).
layers=$(cd "$B" && ls *_w1_split | sed 's/_w1_split$//')
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  run python3 bench/model/reference.py --out /tmp/ref --m ${counts//,/ }
  for layer in $layers; do
    for v in split nosplit staged; do
      run timeout 200 "$B/symm-launch" -n 1 "$B/${layer}_w1_$v" /tmp/ref --tokens=$counts
    done
    SYMM_CUDA_GRAPHS=0 run timeout 200 "$B/symm-launch" -n 1 "$B/${layer}_w1_split" /tmp/ref \
      --tokens=1,16,33,100,129
  done
  run timeout 200 "$B/symm-launch" -n 1 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/checks.log"
for round in 1 2; do
  for layer in $layers; do
    for v in split nosplit; do
      echo "== ${layer} $v (round $round)"
      timeout 200 "$B/symm-launch" -n 1 "$B/${layer}_w1_$v" /tmp/ref --tokens=1,16,32,64,128,2048 \
        2>&1 | grep TIME
    done
  done
done 2>&1 | tee "$OUT/timing.log"
