#!/usr/bin/env bash
# Session 27, one H200: where the time of many graphs in turn goes.
# graph_cycle_probe.cu replays 128 graphs of spin kernels in turn as fast as
# one (2026-11-28-graph-replay-h200.md), so CUDA's graph switch is not the
# cost; the runtime's graphs of the MLP block are (53.5 µs a call at 1
# argument set, 86.4 at 80, eager 52.2). many_keys.py --profile: each
# kernel's µs per call and the GPU's idle time, at 1 and 80 layers, graphs
# on and off, programmatic launch on and off (build oproj_split_build.sh).
#   (device) tar -xJf target/s27.tar.xz -C target && bash bench/device/many_keys_profile_h200.sh target/s27
set -uo pipefail
B=${1:?usage: many_keys_profile_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
for pdl in 1 0; do
  for layers in 1 80; do
    for graphs in 1 0; do
      echo "== layers=$layers SYMM_CUDA_GRAPHS=$graphs SYMM_PDL=$pdl"
      SYMM_PDL=$pdl SYMM_CUDA_GRAPHS=$graphs SYMM_LOG=warn SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so \
        PYTHONPATH=python:bench/model run timeout 200 "$B/symm-launch" -n 1 python3 bench/model/many_keys.py \
        "$B/layers/libmlp_4096x7168.so" 4096 7168 --layers "$layers" --tokens 16 --steps 10 --profile
    done
  done
done 2>&1 | grep -v Warning | tee "$OUT/many_keys_profile.log"
