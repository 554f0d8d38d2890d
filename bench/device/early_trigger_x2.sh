#!/usr/bin/env bash
# Issue 32, session 15, 2x H200: the decoder half-layer with its
# all-reduce kernels letting the next grid launch as soon as they start
# (griddepcontrol.launch_dependents after their wait), so that the gate/up
# pair's blocks become resident while the all-reduce before it waits on
# NVLink, and with the pair's first P weight steps prefetched into L2 there
# before its own wait (P = 0, 4, 8, 16), beside the default build in one
# process, two rounds, at 1 and 16 tokens (LAYER_TOKENS).
#   (here)   scratch build target/et: ebb73f3 with bench/device/early_trigger.patch
#            (SYMM_EXP_EARLY_TRIGGER, SYMM_EXP_PAIR_PREFETCH at symm-compile time)
#   (device) bash bench/device/early_trigger_x2.sh target/et   (kind nvidia-h200-x2)
set -uo pipefail
B=${1:?usage: early_trigger_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=$B/layers
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-1,16}
variants=""
for v in ${VARIANTS:-trig p4 p8 p16}; do variants="$variants $v=$L/libllama_decoder_$v.so"; done
for round in 1 2; do
  # shellcheck disable=SC2086 # the variants are words
  run timeout 280 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$L/libllama_decoder.so" \
    $variants 2>&1 | tee "$OUT/decoder_bench_$round.log"
done
