#!/usr/bin/env bash
# Issue 32, session 42: the after-GEMV wgmma ring (`wgmma-gemv-after-gemv`,
# on for --chip sm_90a) against the same build without it. Builds into DIR
# (sm_90a): matmul_build.sh's layers and apps at the widths below, TP 2 and
# 4, then the baseline layers mlp0_4096x7168 and dec0_<widths> with
# --no-matmul-wgmma-gemv-after-gemv (the kernels of HEAD before it).
#   bench/device/ring_before_wait_build.sh target/rb
#   (device) bash bench/device/ring_before_wait_h200.sh target/rb
out=${1:?usage: ring_before_wait_build.sh DIR}
set -euo pipefail
cd "$(dirname "$0")/../.."
export WIDTHS="4096x7168 5120x1728 3072x8192 2064x1000" TP_WORLDS="2 4" \
  DECODER_WIDTHS="4096x2048x7168 4096x512x1792" LAYER_FLAGS="--chip sm_90a"
bench/device/matmul_build.sh "$out"
bench/device/baseline_layers.sh "$out" mlp0 dec0 --no-matmul-wgmma-gemv-after-gemv
rm -rf "$out/symm-gpu-tests"
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
