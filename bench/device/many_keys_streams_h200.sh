#!/usr/bin/env bash
# Session 27, one H200: many graphs in turn, by stream and by how far the
# host runs ahead. Under torch's profiler one step of 80 argument sets took
# 56.2 µs a call with graphs (4.4 µs idle), timed without it 82.1
# (many_keys_profile_h200.sh). The layer's calls there are on torch's legacy
# default stream, where the runtime replays graphs it captured on its own.
#   1. graph_cycle_probe.cu with its legacy mode (graphs captured on one
#      stream, replayed on the legacy default stream), 5 kernels of 9 µs.
#   2. many_keys.py at 80 argument sets (and 1): graphs on the legacy stream
#      (as before), on a stream of torch's own (--stream), and with the host
#      held 2, 16 or 128 calls ahead (--ahead); eager beside.
#   (device) tar -xJf target/s27.tar.xz -C target && bash bench/device/many_keys_streams_h200.sh target/s27
set -uo pipefail
B=${1:?usage: many_keys_streams_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvcc -O3 -arch=sm_90 -o /tmp/graph_cycle bench/probes/graph_cycle_probe.cu 2>&1 | tee "$OUT/graph_cycle_build.log"
run /tmp/graph_cycle 5 9 2>&1 | tee "$OUT/graph_cycle_legacy.log"
keys() { # layers graphs [many_keys.py options]
  local layers=$1 graphs=$2
  shift 2
  echo "== layers=$layers SYMM_CUDA_GRAPHS=$graphs $*"
  SYMM_CUDA_GRAPHS=$graphs SYMM_LOG=warn SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so \
    PYTHONPATH=python:bench/model run timeout 200 "$B/symm-launch" -n 1 python3 bench/model/many_keys.py \
    "$B/layers/libmlp_4096x7168.so" 4096 7168 --layers "$layers" --tokens 16 --steps 10 "$@"
}
{
  for layers in 1 80; do
    keys $layers 1
    keys $layers 1 --stream
  done
  keys 80 0
  keys 80 0 --stream
  for ahead in 2 16 128; do
    keys 80 1 --ahead $ahead
    keys 80 1 --stream --ahead $ahead
  done
} 2>&1 | grep -v Warning | tee "$OUT/many_keys_streams.log"
