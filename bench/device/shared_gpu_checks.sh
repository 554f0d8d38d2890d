#!/usr/bin/env bash
# The multi-rank checks on ONE GPU (symm-launch --gpus 1): 2, 4 and 8
# ranks share the GPU, so that the protocols (signal pads, barriers, the
# Lamport one-shots, split-K slices summed by the rows kernels) and the
# sharded layers run with real peers where no multi-GPU machine is lent.
# A check of correctness only: the ranks' kernels take turns on the GPU,
# so the TIME lines mean nothing (one iteration each).
#
#   bench/device/shared_gpu_build.sh target/gN
#   (device) bash bench/device/shared_gpu_checks.sh target/gN [WORLDS] [SECTIONS]
#
# WORLDS: "2 4 8" unless given; SECTIONS: "apps tests" unless given.
# symm-gpu-tests runs test by test without barrier-100k: 100,000 barriers
# at a turn of the GPU each (about 2.4 ms with 2 ranks) would take hours.
set -uo pipefail
B=${1:?usage: shared_gpu_checks.sh BUILD_DIR [WORLDS] [SECTIONS]}
worlds=${2:-2 4 8}
sections=" ${3:-apps tests} "
want() { [[ $sections == *" $1 "* ]]; }
tests="p2p all-reduce lamport graph-replay memory-baseline mgpu-abi all-gather-matmul fused-rmsnorm matmul-pair"
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20
{
  date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader
  want apps && run python3 bench/model/reference.py --out /tmp/ref --m 1 16 33 64 65 128 129 2048
  for world in $worlds; do
    tokens=1,16,33,64,65,128,129,2048
    [ "$world" = 8 ] && tokens=1,33,129,2048
    if want apps; then
      for layer in llama_mlp llama_attn_out llama_decoder; do
        run timeout 240 "$B/symm-launch" -n "$world" --gpus 1 "$B/w$world/$layer" /tmp/ref \
          --tokens=$tokens --iterations=1
      done
      SYMM_CUDA_GRAPHS=0 run timeout 240 "$B/symm-launch" -n "$world" --gpus 1 \
        "$B/w$world/llama_decoder" /tmp/ref --tokens=1,129 --iterations=1
    fi
    if want tests; then
      for test in $tests; do
        run timeout 150 "$B/symm-launch" -n "$world" --gpus 1 "$B/symm-gpu-tests" "$test"
      done
      echo "== a peer dies at world $world (rank 1 leaves; the others time out)"
      RANKS=$world GPUS=1 SYMM_TIMEOUT_S=5 ranks timeout 90 "$B/symm-gpu-tests" dead-peer
    fi
  done
} 2>&1 | tee -a "$OUT/shared_gpu_checks.log"
