#!/usr/bin/env bash
# Issue 32, session 30, 2x H200 (build: python/build_layer.sh of
# examples/llama_{decoder,mlp}.mlir as is and with SYMM_COMPILE_FLAGS="--chip
# sm_90a", LAYER_NAME=llama_*_sm90a, into DIR/layers). The decoder half-layer
# at TP 2 with the short-grid wgmma GEMV (sm_90a: o_proj at 2-16 rows)
# against the sm_90 build, beside torch's variants and torch.compile in one
# decoder_bench.py process, 3 weight copies, enqueued, measured replay choice.
#   (device) tar -xJf target/s30x.tar.xz -C target && bash bench/device/wgmma_short_x2.sh target/s30x
set -uo pipefail
B=${1:?usage: wgmma_short_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
L=$B/layers OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model SYMM_LOG=info
export LAYER_TOKENS=${LAYER_TOKENS:-1,16} LAYER_WEIGHT_COPIES=3 TORCH_VARIANTS=two_shot
# Rounds in both orders: ours first (sm_90), then the sm_90a build first.
for round in 1 2 3; do
  first=llama_decoder second=llama_decoder_sm90a name=sm90a
  (( round == 2 )) && first=llama_decoder_sm90a second=llama_decoder name=sm90
  run timeout 200 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$L/lib$first.so" \
    $name="$L/lib$second.so" 2>&1 | grep -v Warning > "$OUT/decoder_bench_$round.log"
  grep "takes the\|as kernel launches\|exit status" "$OUT/decoder_bench_$round.log" | grep "rank 0\|exit" \
    | cut -c1-200 | head -12
  echo "round $round: symm_us is $first, symm_${name}_us $second"
  bench_columns "round $round" "$OUT/decoder_bench_$round.log" symm_us symm_prepared_us symm_${name}_us \
    symm_${name}_prepared_us symm_cg_us symm_${name}_cg_us torch_compile_best_us
done
