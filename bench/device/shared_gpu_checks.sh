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
# SPREAD_GPUS=N spreads the ranks over N GPUs instead (symm-launch --gpus N:
# rank r on GPU r mod N), for a machine of several GPUs.
# TOKENS (the apps' token counts) overrides the defaults below; with
# SYMM_MATMUL=generated the apps run the generated matmuls at every
# shard width. WORLDS: "2 4 8" unless given; SECTIONS: "apps tests errors" unless given
# (errors: at world 2, whatever WORLDS says: the apps that must fail
# with a clear message, dead and late peers, mismatched programs, the Rust
# and partitioned apps, the custom reduce-scatter, compute-sanitizer). symm-gpu-tests skips barrier-100k by itself when
# ranks share a GPU: 100,000 barriers at a turn of the GPU each (about
# 2.4 ms with 2 ranks) would take hours.
set -uo pipefail
B=${1:?usage: shared_gpu_checks.sh BUILD_DIR [WORLDS] [SECTIONS]}
worlds=${2:-2 4 8}
sections=" ${3:-apps tests errors} "
want() { [[ $sections == *" $1 "* ]]; }
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20
G=${SPREAD_GPUS:-1}
{
  date -u; nvidia-smi --query-gpu=name,driver_version,compute_mode --format=csv,noheader
  extra=${TOKENS:-}
  refs=$(echo 1 16 33 64 65 128 129 2048 ${extra//,/ } | tr ' ' '\n' | sort -nu | tr '\n' ' ')
  run python3 bench/model/reference.py --out /tmp/ref --m $refs --partitioned
  for world in $worlds; do
    tokens=1,16,33,64,65,128,129,2048
    [ "$world" = 8 ] && tokens=1,33,129,2048
    tokens=${TOKENS:-$tokens}
    if want apps; then
      for layer in llama_mlp llama_attn_out llama_decoder; do
        run timeout 240 "$B/symm-launch" -n "$world" --gpus "$G" "$B/w$world/$layer" /tmp/ref \
          --tokens=$tokens --iterations=1
      done
      SYMM_CUDA_GRAPHS=0 run timeout 240 "$B/symm-launch" -n "$world" --gpus "$G" \
        "$B/w$world/llama_decoder" /tmp/ref --tokens=1,129 --iterations=1
    fi
    if want tests; then
      run timeout 400 "$B/symm-launch" -n "$world" --gpus "$G" "$B/symm-gpu-tests"
      echo "== a peer dies at world $world (rank 1 leaves; the others time out)"
      RANKS=$world GPUS=$G SYMM_TIMEOUT_S=5 ranks timeout 90 "$B/symm-gpu-tests" dead-peer
    fi
  done
  if want errors; then
    w2=$B/w2
    launch2() { timeout 240 "$B/symm-launch" -n 2 --gpus 1 "$@"; }
    run launch2 "$w2/llama_mlp_rust" /tmp/ref
    run launch2 "$w2/partitioned" /tmp/ref --iterations=1
    run launch2 "$w2/tp_mlp"
    run launch2 "$w2/reduce_scatter"
    echo "== expected to fail (non-zero), each with a clear message:"
    run launch2 "$w2/llama_mlp" /tmp/ref --plant-fault=sync
    run launch2 "$w2/llama_mlp" /tmp/ref --plant-fault=async
    run launch2 "$w2/llama_mlp" /tmp/ref --plant-fault=too-many-tokens
    run launch2 "$w2/llama_mlp_bad_ptx" /tmp/ref
    echo "== a peer dies inside a compiled call (timeout 5 s)"
    GPUS=1 SYMM_TIMEOUT_S=5 ranks timeout 90 "$w2/llama_attn_out" /tmp/ref --die-after=3
    echo "== a peer 1 s late (timeout 5 s; must pass)"
    GPUS=1 SYMM_TIMEOUT_S=5 ranks timeout 90 "$w2/llama_attn_out" /tmp/ref --late-ms=1000 \
      --tokens=1,129 --iterations=1
    echo "== rank 0: tp_mlp for 64 rows, rank 1: the same program for 128 rows (timeout 5 s)"
    GPUS=1 SYMM_TIMEOUT_S=5 pair "$w2/tp_mlp" "$w2/tp_mlp_m128"
    echo "== rank 0: tp_mlp for 2 ranks, rank 1: for 4 ranks (timeout 5 s)"
    GPUS=1 SYMM_TIMEOUT_S=5 pair "$w2/tp_mlp" "$w2/tp_mlp_w4"
    run launch2 compute-sanitizer --tool memcheck --error-exitcode 9 "$w2/llama_decoder" /tmp/ref \
      --tokens=1,129 --iterations=1
  fi
} 2>&1 | tee -a "$OUT/shared_gpu_checks.log"
