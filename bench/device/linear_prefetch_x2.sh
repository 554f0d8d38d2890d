#!/usr/bin/env bash
# Session 23, 2x H200: the Llama-3-8B MLP block at TP 2 with its weights in
# nn.Linear's layout (bench/model/linear_mlp.mlir), this build and the
# previous commit's (head=..., before the n x k lone matmul's L2 prefetch)
# in one process, beside torch's variants and torch.compile + CUDA graphs
# multiplying by the same n x k weights (layer_bench.py, LAYER_BLOCK=linear),
# two rounds; then the row-major block once, in the same call.
#   (here)   mkdir -p target/tx/layers && for p in bench/model/linear_mlp.mlir examples/llama_mlp.mlir; do
#              python/build_layer.sh $p target/tx/layers; done, plus target/tx/layers/liblinear_mlp_head.so
#              (linear_mlp.mlir through the previous commit's symm-compile) && (cd target && tar -cJf tx.tar.xz tx)
#   (device) tar -xJf target/tx.tar.xz -C target && bash bench/device/linear_prefetch_x2.sh target/tx
set -uo pipefail
B=${1:?usage: linear_prefetch_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,8,16}
for round in 1 2; do
  LAYER_BLOCK=linear run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$L/liblinear_mlp.so" "head=$L/liblinear_mlp_head.so" 2>&1 | tee "$OUT/linear_bench_$round.log"
done
LAYER_BLOCK=llama run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
  "$L/libllama_mlp.so" 2>&1 | tee "$OUT/llama_bench.log"
for log in "$OUT"/linear_bench_*.log "$OUT/llama_bench.log"; do
  bench_columns "$(basename "$log" .log)" "$log" symm_us symm_head_us symm_cg_us torch_compile_best_us
done
