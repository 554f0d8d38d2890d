#!/usr/bin/env bash
# Session 26, 2x H200 (TP 2): issue 32's targets with the benches' calls on
# the same weights (as every earlier figure) and on 3 weight copies taken in
# turn, on every side alike (LAYER_WEIGHT_COPIES, as a model's layers
# follow one another). On one H200 the MLP block's gate/up pair ran about
# 1 µs faster at 16 rows with the same weights each call
# (2026-11-28-l2-state-h200.md). The MLP block also as built with the
# 16-row wgmma GEMV (`wg`, 4.6-4.8 µs slower than the default at 16 rows in
# session 25's same-weights x2 run): is that loss the bench's? Then the MLP
# block's kernels per call at 16 rows on the copies. Torch's one-shot and
# two-shot variants, torch.compile (Inductor) + CUDA graphs beside, at 1,
# 16 and 128 tokens.
#   (here)   build_layer.sh examples/llama_{mlp,decoder}.mlir target/s26/layers, the MLP again as
#            LAYER_NAME=llama_mlp_wg SYMM_COMPILE_FLAGS="--chip sm_90a --matmul-wgmma-gemv
#            --matmul-wgmma-gemv-few"; tar -cJf target/s26.tar.xz -C target s26
#   (device) tar -xJf target/s26.tar.xz -C target && bash bench/device/session26_x2.sh target/s26
set -uo pipefail
B=${1:?usage: session26_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
floor_read 2>&1 | tee "$OUT/floor.log"
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model SYMM_LOG=info
export TORCH_VARIANTS=one_shot,two_shot LAYER_TOKENS=1,16,128
for copies in 1 3; do
  LAYER_WEIGHT_COPIES=$copies run timeout 170 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$L/libllama_mlp.so" wg="$L/libllama_mlp_wg.so" 2>&1 | grep -v Warning | tee "$OUT/layer_bench_c$copies.log"
done
for copies in 1 3; do
  LAYER_WEIGHT_COPIES=$copies run timeout 170 torchrun --nproc_per_node=2 bench/model/decoder_bench.py \
    "$L/libllama_decoder.so" 2>&1 | grep -v Warning | tee "$OUT/decoder_bench_c$copies.log"
done
for log in "$OUT"/layer_bench_c*.log "$OUT"/decoder_bench_c*.log; do
  bench_columns "$(basename "$log" .log)" "$log" symm_us symm_wg_us symm_cg_us torch_compile_best_us
done
LAYER_WEIGHT_COPIES=3 PROFILE_BLOCK=mlp PROFILE_TOKENS=16 run timeout 120 \
  torchrun --nproc_per_node=2 bench/model/layer_profile.py "$L/libllama_mlp.so" 2>&1 | grep -v Warning \
  | tee "$OUT/profile_mlp_c3.log"
