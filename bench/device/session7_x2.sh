#!/usr/bin/env bash
# Issue 32, session 7, on 2 GPUs in one device call: the weight-read floor
# (bench/floor), the MLP block and the decoder half-layer with the single
# matmuls' GEMVs prefetching their first weight lines (NEW) against the same
# build without (OLD, --no-matmul-prefetch) as two layers of one
# layer_bench.py / decoder_bench.py process beside torch's variants and
# torch.compile + CUDA graphs (two rounds), then the per-kernel profile of
# NEW (layer_profile.py).
#
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/x2n/layers (and llama_decoder);
#            the same with SYMM_COMPILE_FLAGS=--no-matmul-prefetch into target/x2o
#   (device) bash bench/device/session7_x2.sh target/x2n target/x2o   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: session7_x2.sh NEW_BUILD OLD_BUILD}
OLD=${2:?usage: session7_x2.sh NEW_BUILD OLD_BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
floor_read 2>&1 | tee "$OUT/floor.log"
LAYER_TOKENS=${LAYER_TOKENS:-1,16,128} OUT=$OUT bash "$(dirname "$0")/epilogue_ab_x2.sh" "$NEW" "$OLD"
SYMM_RUNTIME_LIB=$NEW/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
  PROFILE_TOKENS=${PROFILE_TOKENS:-1,16} \
  run timeout 200 torchrun --nproc_per_node=2 bench/model/layer_profile.py "$NEW/layers/libllama_mlp.so" \
  2>&1 | tee "$OUT/layer_profile.log"
