#!/usr/bin/env bash
# Issue 32, session 8, on 2 GPUs: the decoder half-layer with o_proj
# (K = 2048 at TP 2) split over K into 2 slices that the all-reduce sums
# (NEW: --split-k-min-k=2048; its GEMVs then have 128 blocks, not 64)
# against the default (OLD: split from K = 3072, o_proj whole), as two
# layers of one decoder_bench.py process beside torch.compile + CUDA
# graphs, two rounds; then the kernels per call of both (layer_profile.py
# does the MLP only, so decoder_bench's profile is not taken).
#
#   (here)   python/build_layer.sh examples/llama_decoder.mlir target/ks/new/layers
#            with SYMM_COMPILE_FLAGS=--split-k-min-k=2048, and without into target/ks/old
#   (device) bash bench/device/oproj_split_x2.sh   (kind nvidia-h200-x2)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
NEW=target/ks/new OLD=target/ks/old
export SYMM_RUNTIME_LIB=$NEW/layers/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,4,8,16,128}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  run timeout 280 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$NEW/layers/libllama_decoder.so" \
    "old=$OLD/layers/libllama_decoder.so" 2>&1 | tee "$OUT/decoder_bench_$round.log"
done
