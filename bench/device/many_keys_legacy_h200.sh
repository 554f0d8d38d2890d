#!/usr/bin/env bash
# Session 27, one H200: graphs of calls on the legacy default stream, three
# ways (SYMM_LEGACY_REPLAY, this session's runtime). many_keys_streams_h200.sh
# found 80 argument sets in turn at 86.5 µs a call on the legacy stream and
# 53.5 on a stream of torch's own; graph_cycle_probe.cu's legacy mode
# (captured on one stream, replayed on the legacy one) loses 3.5-13 µs a
# call at 32-128 graphs in turn where replays on the capture stream lose
# nothing.
#   1. graph_cycle_probe.cu with lupload (uploaded to the legacy stream) and
#      hop (replayed on the capture stream, joined by an event each way).
#   2. many_keys.py on the legacy stream: direct (as before), upload, hop at
#      1, 32 and 80 argument sets and 32 layers x 3 token counts; eager and
#      torch's own stream beside.
#   (here) bench/device/oproj_split_build.sh target/s27, this runtime copied into
#          target/s27/layers (both names), tar -cJf target/s27.tar.xz -C target s27
# VOID AS RUN: the libsymm_runtime.so carried was a stale build (cargo build
# -p symm-runtime does not rebuild the .so; symm-runtime-clib does), so all
# three modes ran the old direct replay; SYMM_LEGACY_REPLAY was then removed
# (2026-11-28-legacy-replay-h200.md, section 4).
#   (device) tar -xJf target/s27.tar.xz -C target && bash bench/device/many_keys_legacy_h200.sh target/s27
set -uo pipefail
B=${1:?usage: many_keys_legacy_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvcc -O3 -arch=sm_90 -o /tmp/graph_cycle bench/probes/graph_cycle_probe.cu 2>&1 | tee "$OUT/graph_cycle_build.log"
run /tmp/graph_cycle 5 9 2>&1 | tee "$OUT/graph_cycle_hop.log"
keys() { # layers tokens graphs [many_keys.py options]
  local layers=$1 tokens=$2 graphs=$3
  shift 3
  echo "== layers=$layers tokens=$tokens SYMM_CUDA_GRAPHS=$graphs SYMM_LEGACY_REPLAY=${SYMM_LEGACY_REPLAY:-} $*"
  SYMM_CUDA_GRAPHS=$graphs SYMM_LOG=warn SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so \
    PYTHONPATH=python:bench/model run timeout 200 "$B/symm-launch" -n 1 python3 bench/model/many_keys.py \
    "$B/layers/libmlp_4096x7168.so" 4096 7168 --layers "$layers" --tokens "$tokens" --steps 10 "$@"
}
{
  for mode in direct upload hop; do
    for shape in "1 16" "32 16" "80 16" "32 1,16,17"; do
      SYMM_LEGACY_REPLAY=$mode keys ${shape% *} ${shape#* } 1
    done
  done
  keys 80 16 0
  keys 32 1,16,17 0
  keys 80 16 1 --stream
} 2>&1 | grep -v Warning | tee "$OUT/many_keys_legacy.log"
