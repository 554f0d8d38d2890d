#!/usr/bin/env bash
# Session 27, 2x H200 (TP 2): the decoder half-layer as shipped against the
# same built with the opt-in wgmma GEMV for its single matmuls (o_proj, the
# down projection) at 2-128 rows (`wg`: --chip sm_90a --matmul-wgmma-gemv
# --matmul-wgmma-gemv-few). Session 26 found the MLP block's `wg` build tie
# the default on cold weights (54.5 against 54.8 µs at 16 rows) while its
# down kernel alone reads 3 µs faster; the decoder misses its 16-row target
# by about 2.5 µs. Two rounds, 3 weight copies, in one decoder_bench.py
# process beside torch's variants and torch.compile.
#   (here)   LAYER_NAME=llama_decoder_wg SYMM_COMPILE_FLAGS="..." python/build_layer.sh
#            examples/llama_decoder.mlir target/s27/layers; tar -cJf target/s27.tar.xz -C target s27
#   (device) tar -xJf target/s27.tar.xz -C target && bash bench/device/decoder_wg_x2.sh target/s27
set -uo pipefail
B=${1:?usage: decoder_wg_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model SYMM_LOG=info
export TORCH_VARIANTS=one_shot,two_shot LAYER_TOKENS=1,16,128 LAYER_WEIGHT_COPIES=3
for round in 1 2; do
  run timeout 200 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$L/libllama_decoder.so" \
    wg="$L/libllama_decoder_wg.so" 2>&1 | grep -v Warning | tee "$OUT/decoder_bench_$round.log"
  bench_columns "round $round" "$OUT/decoder_bench_$round.log" symm_us symm_wg_us symm_cg_us symm_wg_cg_us \
    torch_compile_best_us
done
