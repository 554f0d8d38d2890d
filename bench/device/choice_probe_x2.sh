#!/usr/bin/env bash
# Issue 32, session 15, 2x H200: how often the decoder's measured matmul
# choices at 16 rows differ between processes (bench/model/choice_probe.py,
# SYMM_LOG=info, PROCESSES runs), with the runtime's measurement as it is
# (target/el: 6 blocks, 2 of each way counted) and with 10 blocks (4 of each
# way counted; target/el2, the same layer).
#   (device) bash bench/device/choice_probe_x2.sh   (kind nvidia-h200-x2)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
for build in target/el target/el2; do
  L=$build/layers
  for i in $(seq "${PROCESSES:-6}"); do
    echo "== $build process $i"
    SYMM_LOG=info SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model LAYER_TOKENS=${LAYER_TOKENS:-16} \
      timeout 120 torchrun --nproc_per_node=2 bench/model/choice_probe.py "$L/libllama_decoder.so" 2>&1 \
      | grep "matmul site" | sed 's/.*matmul site/matmul site/' | sort -u
  done
done 2>&1 | tee "$OUT/choice_probe.log"
