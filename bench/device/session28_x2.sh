#!/usr/bin/env bash
# Session 28, 2x H200 (TP 2): issue 32's targets with the gated runtime
# (stream_gate.rs) at 1, 16, 128 and 2048 tokens, 3 weight copies, beside
# torch's variants and torch.compile (Inductor) in CUDA graphs, the floor
# first; the measured choices logged.
#   (here)   the layers of stream_gate_h200.sh's build; tar -cJf target/s28.tar.xz -C target s28/layers s28/symm-launch
#   (device) tar -xJf target/s28.tar.xz -C target && bash bench/device/session28_x2.sh target/s28
set -uo pipefail
B=${1:?usage: session28_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
floor_read 2>&1 | tee "$OUT/floor.log"
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model SYMM_LOG=info
export LAYER_TOKENS=1,16,128,2048 LAYER_WEIGHT_COPIES=3
for bench in layer decoder; do
  lib=$L/libllama_mlp.so
  [[ $bench == decoder ]] && lib=$L/libllama_decoder.so
  run timeout 280 torchrun --nproc_per_node=2 bench/model/${bench}_bench.py "$lib" 2>&1 \
    | grep -v -e Warning -e "symmetric buffer" > "$OUT/${bench}_bench.log"
  grep -E "rank 0.*(matmul site|matmul pair)" "$OUT/${bench}_bench.log"
  bench_columns "$bench" "$OUT/${bench}_bench.log" symm_us symm_cg_us torch_compile_best_us
done 2>&1 | tee "$OUT/summary.log"
