#!/usr/bin/env bash
# Issue 32, session 15, one H200: correctness of the final build
# (bench/device/matmul_build.sh target/fc; the rows kernels signal early at
# one row): the C++ Llama apps against torch's f32 reference (world 1, and
# TP 2 with both ranks on one GPU, measured and generated: the decoder at
# 1 token runs the early launch and the pair's prefetch), symm-gpu-tests
# at TP 2. (The MLP block's kernels are byte for byte as before: no rows
# kernel in it.)
#   (device) tar -xJf target/fc.tar.xz -C target && bash bench/device/final_checks_s15_h200.sh
set -uo pipefail
B=target/fc
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20
{
  llama_apps
  run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/checks.log"
