#!/usr/bin/env bash
# Session 21, 2x H200: the Llama-3-8B MLP block at TP 2 with its weights in
# nn.Linear's layout (bench/model/linear_mlp.mlir) beside torch's variants
# and torch.compile + CUDA graphs multiplying by the same n x k weights
# (layer_bench.py, LAYER_BLOCK=linear), two rounds; then the row-major block
# (examples/llama_mlp.mlir) and its torch variants once, in the same call.
#   (here)   mkdir -p target/tx/layers && for p in bench/model/linear_mlp.mlir examples/llama_mlp.mlir; do
#              python/build_layer.sh $p target/tx/layers; done && (cd target && tar -cJf tx.tar.xz tx)
#   (device) tar -xJf target/tx.tar.xz -C target && bash bench/device/linear_x2.sh target/tx
# BUILDS ("LABEL=LIB ...", LIB in the build's layers) adds more builds of the
# n x k block to the same processes (timed and checked as symm_LABEL_us), as
# session 23 ran the previous commit's beside its own (head=liblinear_mlp_head.so).
set -uo pipefail
B=${1:?usage: linear_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,16,128}
for round in 1 2; do
  builds=()
  for build in ${BUILDS:-}; do builds+=("${build%%=*}=$L/${build#*=}"); done
  LAYER_BLOCK=linear run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$L/liblinear_mlp.so" "${builds[@]}" 2>&1 | tee "$OUT/linear_bench_$round.log"
done
LAYER_BLOCK=llama run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
  "$L/libllama_mlp.so" 2>&1 | tee "$OUT/llama_bench.log"
for log in "$OUT"/linear_bench_*.log "$OUT/llama_bench.log"; do
  columns=(symm_us)
  for build in ${BUILDS:-}; do columns+=("symm_${build%%=*}_us"); done
  bench_columns "$(basename "$log" .log)" "$log" "${columns[@]}" symm_cg_us torch_compile_best_us torch_best_us
done
