#!/usr/bin/env bash
# Issue 32, session 10, on 2 GPUs: the kernels without a launch_dependents
# of their own (the all-reduce and rows kernels) letting the next grid in
# right after their wait, so that a GEMV after them (the decoder's pair
# after the middle all-reduce; every block's first pair in a graph of many
# calls) becomes resident and prefetches its weight into L2 while the
# all-reduce runs. Variants of a scratch build (bench/device/early_launch.patch,
# compile-time SYMM_EXP_* variables) as layers of one layer_bench.py /
# decoder_bench.py process beside torch's variants and torch.compile:
#   base   HEAD
#   early  the trigger after the wait, pairs without prefetch
#   p4/p8  the trigger, and the pairs prefetch their first 4/8 steps
#   (here)   for v in base early p4 p8: LAYER_NAME=llama_mlp_$v [SYMM_EXP_EARLY=1 SYMM_EXP_PAIR_PREFETCH=N]
#            python/build_layer.sh examples/llama_mlp.mlir target/ea/layers (and llama_decoder)
#   (device) bash bench/device/early_launch_x2.sh   (kind nvidia-h200-x2)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=target/ea/layers
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,4,16}
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for block in ${BLOCKS:-decoder mlp}; do
    bench=layer_bench.py; [ "$block" = decoder ] && bench=decoder_bench.py
    extra=(); for v in ${VARIANTS:-early p4 p8}; do extra+=("$v=$L/libllama_${block}_$v.so"); done
    run timeout 280 torchrun --nproc_per_node=2 bench/model/$bench "$L/libllama_${block}_base.so" "${extra[@]}" \
      2>&1 | tee "$OUT/${block}_bench_$round.log"
  done
done
