#!/usr/bin/env bash
# Session 26, 2x H200 (TP 2): the layer benches with 3 weight copies taken
# in turn (LAYER_WEIGHT_COPIES=3), our layers' own CUDA graphs on
# (SYMM_CUDA_GRAPHS=1, the default) and off (every call eager, its
# launches programmatic), with this session's runtime (argument sets share
# a function's buffers). On one H200 a model's pattern of calls (each
# layer its weights) ran 51.6-52.9 µs a call eager against 64-100 with
# graphs (many_keys_graphs_h200.sh). The checks after the graph replays
# also cover the shared buffers at TP 2.
#   (here)   target/s26 (session26_x2.sh's build) with target/release's libsymm_runtime.so
#            copied over its runtime; tar -cJf target/s26b.tar.xz -C target s26
#   (device) tar -xJf target/s26b.tar.xz -C target && bash bench/device/graphs_rotation_x2.sh target/s26
set -uo pipefail
B=${1:?usage: graphs_rotation_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export TORCH_VARIANTS=one_shot,two_shot LAYER_TOKENS=1,16,128 LAYER_WEIGHT_COPIES=3
for graphs in 1 0; do
  SYMM_CUDA_GRAPHS=$graphs run timeout 170 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
    "$L/libllama_mlp.so" 2>&1 | grep -v Warning | tee "$OUT/layer_bench_g$graphs.log"
  SYMM_CUDA_GRAPHS=$graphs run timeout 170 torchrun --nproc_per_node=2 bench/model/decoder_bench.py \
    "$L/libllama_decoder.so" 2>&1 | grep -v Warning | tee "$OUT/decoder_bench_g$graphs.log"
done
for log in "$OUT"/layer_bench_g*.log "$OUT"/decoder_bench_g*.log; do
  bench_columns "$(basename "$log" .log)" "$log" symm_us symm_prepared_us symm_cg_us torch_compile_best_us
done
