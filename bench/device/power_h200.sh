#!/usr/bin/env bash
# Issue 32, session 32: is the MLP block power-bound on one H200? The
# board's power, SM clock and throttle reasons (NVML) while the 4096/7168
# block (world size 1) replays in CUDA graphs, forced generated and forced
# cuBLAS, beside the same block as torch ops and a cuBLAS read of the
# block's bytes (bench/model/power_probe.py); then, with VARIANTS, other
# builds of the block ($B/layers/lib<v>.so) at 16 rows, forced generated,
# and the driver's cumulative clock-event counters after each process.
#   (here)   WIDTHS=4096x7168 bench/device/hopper_build.sh target/s32
#            (variants: symm-compile into target/s32/layers/lib<v>.so)
#   (device) VARIANTS="wg16 nonorm" bash bench/device/power_h200.sh target/s32
set -uo pipefail
B=${1:?usage: power_h200.sh BUILD}
. "$(dirname "$0")/lib.sh"
export SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model
counters() { nvidia-smi -q -d PERFORMANCE | sed -n '/Counters/,$p' | grep -v '^$'; }
probe() { local lib=$1; shift; run timeout 150 "$B/symm-launch" -n 1 python3 bench/model/power_probe.py \
  "$B/layers/lib$lib.so" 4096 7168 "$@"; counters; }
counters
if [ -z "${VARIANTS_ONLY:-}" ]; then
  SYMM_MATMUL=generated probe mlp_4096x7168 --tokens "${TOKENS:-1,16}"
  SYMM_MATMUL=library probe mlp_4096x7168 --tokens 16 --skip-torch
fi
for v in mlp_4096x7168 ${VARIANTS:-} mlp_4096x7168; do
  SYMM_MATMUL=generated probe "$v" --tokens 16 --skip-torch --label "generated, $v"
done
