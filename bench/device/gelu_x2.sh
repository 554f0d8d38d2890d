#!/usr/bin/env bash
# Issue 32, session 20, on 2 GPUs in one device call: the non-gated (GELU)
# MLP block at TP 2 (bench/model/gelu_mlp.mlir: the up projection with the
# RMSNorm as its fused prologue and GELU as its fused epilogue) beside
# torch's variants and torch.compile (Inductor) + CUDA graphs of the same
# block (layer_bench.py, LAYER_BLOCK=gelu), with the previous compiler's
# build of the same source (`old`: the norm and GELU as kernels of their
# own) in the same process; two rounds.
#   (here)   WIDTHS=" " GELU_WIDTHS=4096x7168 TP_WORLDS=2 bash bench/device/matmul_build.sh target/fin
#            (+ layers/libgelu_old_tp2_4096x7168.so: bench/model/gelu_mlp.mlir by the previous compiler)
#   (device) bash bench/device/gelu_x2.sh target/fin   (kind nvidia-h200-x2)
set -uo pipefail
B=${1:?usage: gelu_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=$B/layers
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_BLOCK=gelu LAYER_TOKENS=${LAYER_TOKENS:-1,16,128}
for round in 1 2; do
  run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py "$L/libgelu_tp2_4096x7168.so" \
    "old=$L/libgelu_old_tp2_4096x7168.so" 2>&1 | tee "$OUT/gelu_bench_$round.log"
  bench_columns "gelu r$round" "$OUT/gelu_bench_$round.log" symm_us symm_old_us symm_cg_us symm_old_cg_us \
    torch_compile_best_us
done
