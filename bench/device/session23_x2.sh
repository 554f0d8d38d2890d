#!/usr/bin/env bash
# Session 23, 2x H200: the layers as a torch program on the default stream
# calls them now (CU_STREAM_LEGACY, no side-stream join), beside torch.compile
# + CUDA graphs: the floor read, the legacy-stream probe (world size 1, GPU 0),
# the row-major MLP block (two rounds), the decoder half-layer and the block
# with n x k weights (one round each), all at TP 2.
#   (here)   mkdir -p target/tx2/layers && for p in bench/model/linear_mlp.mlir examples/llama_mlp.mlir \
#              examples/llama_decoder.mlir; do python/build_layer.sh $p target/tx2/layers; done, plus
#              matmul_build.sh's libmlp_4096x7168.so and symm-launch && (cd target && tar -cJf tx2.tar.xz tx2)
#   (device) tar -xJf target/tx2.tar.xz -C target && bash bench/device/session23_x2.sh target/tx2
set -uo pipefail
B=${1:?usage: session23_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
floor_read 2>&1 | tee "$OUT/floor.log"
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
CUDA_VISIBLE_DEVICES=0 run timeout 150 "$B/symm-launch" -n 1 python3 bench/model/stream_join.py \
  "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,16 --rounds 2 2>&1 | tee "$OUT/stream_join.log"
for round in 1 2; do
  LAYER_TOKENS=1,16,128 run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$L/libllama_mlp.so" 2>&1 | tee "$OUT/layer_bench_$round.log"
done
LAYER_TOKENS=1,16 run timeout 280 torchrun --nproc_per_node=2 bench/model/decoder_bench.py \
  "$L/libllama_decoder.so" 2>&1 | tee "$OUT/decoder_bench.log"
LAYER_BLOCK=linear LAYER_TOKENS=1,16 run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
  "$L/liblinear_mlp.so" 2>&1 | tee "$OUT/linear_bench.log"
for log in "$OUT"/layer_bench_*.log "$OUT/decoder_bench.log" "$OUT/linear_bench.log"; do
  bench_columns "$(basename "$log" .log)" "$log" symm_us symm_prepared_us symm_cg_us torch_compile_best_us
done
