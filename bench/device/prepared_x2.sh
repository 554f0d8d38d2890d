#!/usr/bin/env bash
# Issue 32, session 15, on 2 GPUs in one device call: the host time of the
# Python call paths (bench/model/host_overhead.py, the decoder at 1 and 16
# tokens), then early_launch_rows_x2.sh's run (floor, MLP block and decoder
# beside torch.compile + CUDA graphs, this build and `base`), whose benches
# now also time each layer's prepared call (`symm.Layer.prepare`).
#   (here)   target/el as for early_launch_rows_x2.sh; call 8 with the runtime
#            of kernel_choice::BLOCKS = 10 copied into target/el/layers
#   (device) bash bench/device/prepared_x2.sh target/el   (kind nvidia-h200-x2)
set -uo pipefail
NEW=${1:?usage: prepared_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
L=$NEW/layers
SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model LAYER_TOKENS=1,16 \
  run timeout 200 torchrun --nproc_per_node=2 bench/model/host_overhead.py "$L/libllama_decoder.so" \
  2>&1 | tee "$OUT/host_overhead.log"
bash "$(dirname "$0")/early_launch_rows_x2.sh" "$NEW"
