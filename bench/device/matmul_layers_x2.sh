#!/usr/bin/env bash
# The Llama MLP block and the decoder's TP half on 2 GPUs, compiled with
# the generated matmul kernels behind the measured choice (the default),
# beside torch's variants and torch.compile (Inductor) in CUDA graphs
# (bench/model/layer_bench.py, decoder_bench.py), at decode and mid sizes.
#
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/x2/layers
#            python/build_layer.sh examples/llama_decoder.mlir target/x2/layers
#   (device) bash bench/device/matmul_layers_x2.sh target/x2
set -uo pipefail
B=${1:?usage: matmul_layers_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model SYMM_LOG=info
export LAYER_TOKENS=${LAYER_TOKENS:-1,16,128}
nvidia-smi --query-gpu=name --format=csv,noheader
run timeout 300 torchrun --nproc_per_node=2 bench/model/layer_bench.py "$B/layers/libllama_mlp.so" 2>&1 | tee "$OUT/layer_bench.log"
run timeout 200 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$B/layers/libllama_decoder.so" 2>&1 | tee "$OUT/decoder_bench.log"
