#!/usr/bin/env bash
# Session 27, one H200: why replaying many graphs in turn is slow
# (2026-11-28-graph-cache-h200.md: 80 argument sets of the MLP block in turn,
# 81.7 µs a call with the runtime's graphs against 51.6 eager).
#   1. bench/probes/graph_cycle_probe.cu: spin kernels only, eager against a
#      graph per layer (uploaded or not) and one graph whose kernel nodes'
#      arguments are set before each replay, PDL on and off, 1-128 layers;
#      5 kernels of 9 µs (a layer's length) and of 1 µs (launch-bound).
#   2. many_keys.py (build oproj_split_build.sh's libmlp_4096x7168.so) with
#      the host's enqueue time beside the GPU's: 1, 32 and 80 layers, graphs
#      on and off.
#   3. oproj_split_x2.sh's w1 part: the decoder at TP 2/4/8's widths at world
#      size 1, its o_proj and down projection split over K or not.
# PROBE_ONLY=1 runs part 1 only.
#   (device) tar -xJf target/s27.tar.xz -C target && bash bench/device/graph_cycle_h200.sh target/s27
set -uo pipefail
B=${1:?usage: graph_cycle_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc -O3 -arch=sm_90 -o /tmp/graph_cycle bench/probes/graph_cycle_probe.cu 2>&1 | tee "$OUT/graph_cycle_build.log"
{ run /tmp/graph_cycle 5 9; run /tmp/graph_cycle 5 1; } 2>&1 | tee "$OUT/graph_cycle.log"
[[ ${PROBE_ONLY:-0} == 1 ]] && exit 0
for shape in "1 16" "32 16" "80 16"; do
  for graphs in 1 0; do
    echo "== layers=${shape% *} tokens=${shape#* } SYMM_CUDA_GRAPHS=$graphs"
    SYMM_CUDA_GRAPHS=$graphs SYMM_LOG=warn SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 200 "$B/symm-launch" -n 1 python3 bench/model/many_keys.py "$B/layers/libmlp_4096x7168.so" \
      4096 7168 --layers "${shape% *}" --tokens "${shape#* }" --steps 10
  done
done 2>&1 | tee "$OUT/many_keys.log"
OUT=$OUT PARTS=w1 bash "$(dirname "$0")/oproj_split_x2.sh" "$B"
