#!/usr/bin/env bash
# Issue 32, session 17, on 2 GPUs in one device call: the Lamport one-shot
# up to 1 MiB (symm_protocol::LAMPORT_MAX), which takes the MLP block's
# all-reduce of the down projection's split-K slices at 65-128 rows, where
# the barrier one-shot took it before. The floor, then two rounds of the
# MLP block (LAYER_TOKENS, default 1, 16, 96, 128) beside torch's variants
# and torch.compile (Inductor) + CUDA graphs, each round timing in the same
# process the same compiler with --lamport-max-bytes=524288 (`lm512`: the
# barrier one-shot at 512 KiB-1 MiB, as before) and the previous commit's
# compiler (`old`); then symm-gpu-tests at TP 2 on the two GPUs (the
# Lamport sizes up to 1 MiB, where the grid wraps).
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/lx/layers
#            LAYER_NAME=llama_mlp_lm512 SYMM_COMPILE_FLAGS=--lamport-max-bytes=524288 \
#              python/build_layer.sh examples/llama_mlp.mlir target/lx/layers
#            LAYER_NAME=llama_mlp_old python/build_layer.sh examples/llama_mlp.mlir \
#              target/lx/layers OLD_RELEASE_DIR   (then the new runtime copied back)
#            cp target/release/{symm-gpu-tests,symm-launch} target/lx/
#   (device) bash bench/device/lamport_1m_x2.sh target/lx   (kind nvidia-h200-x2)
# PROFILE=1: instead, where the time goes at 16 and 128 rows
# (layer_profile.py, this build), then the MLP block at 2048 rows beside
# `old`, two rounds.
set -uo pipefail
B=${1:?usage: lamport_1m_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=$B/layers
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
if [ -n "${PROFILE:-}" ]; then
  PROFILE_TOKENS=16,128 run timeout 200 torchrun --nproc_per_node=2 bench/model/layer_profile.py \
    "$L/libllama_mlp.so" 2>&1 | tee "$OUT/layer_profile.log"
  for round in 1 2; do
    LAYER_TOKENS=2048 run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
      "$L/libllama_mlp.so" "old=$L/libllama_mlp_old.so" 2>&1 | tee "$OUT/layer_bench_2048_$round.log"
  done
  exit 0
fi
floor_read 2>&1 | tee "$OUT/floor.log"
export LAYER_TOKENS=${LAYER_TOKENS:-1,16,96,128}
for round in 1 2; do
  run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py "$L/libllama_mlp.so" \
    "lm512=$L/libllama_mlp_lm512.so" "old=$L/libllama_mlp_old.so" 2>&1 | tee "$OUT/layer_bench_$round.log"
done
run timeout 200 "$B/symm-launch" -n 2 "$B/symm-gpu-tests" 2>&1 | tee "$OUT/gpu_tests.log"
