#!/usr/bin/env bash
# Session 25, 2x H200 (TP 2): the MLP block and the decoder half-layer as
# committed, beside the same built with the 16-row wgmma GEMV for the
# single matmuls at 2-16 rows, 1024 weight rows prefetched
# (`wgp1k`: --chip sm_90a --matmul-wgmma-gemv --matmul-wgmma-gemv-few
# --matmul-wgmma-gemv-prefetch 1024; on one H200 it tied the default in
# the block and read the down projection alone at 3.2-3.3 TB/s, the
# default prefetch at 3.6-3.8), torch.compile (Inductor) + CUDA graphs and
# torch's variants in the same process, at 1, 16 and 128 tokens, two
# rounds; the measured choices logged (SYMM_LOG=info).
#   (here)   build_layer.sh examples/llama_{mlp,decoder}.mlir target/x25/layers, and each again as
#            LAYER_NAME=llama_{mlp,decoder}_wgp1k SYMM_COMPILE_FLAGS="<the flags above>"; tar
#   (device) tar -xJf target/x25.tar.xz -C target && bash bench/device/wgmma_prefetch_x2.sh target/x25
set -uo pipefail
B=${1:?usage: wgmma_prefetch_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export TORCH_VARIANTS=one_shot,two_shot LAYER_TOKENS=1,16,128 SYMM_LOG=info
layers_beside_x2 "$B" wgp1k
for log in "$OUT"/layer_bench_*.log "$OUT"/decoder_bench_*.log; do
  bench_columns "$(basename "$log" .log)" "$log" symm_us symm_wgp1k_us torch_compile_best_us
done
