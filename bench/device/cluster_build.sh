#!/usr/bin/env bash
# Issue 32, session 44, prepared for the next session (not run: this
# session's device time was spent): the wgmma GEMVs in clusters of 2 that
# share `a` by TMA multicast (--matmul-wgmma-gemv-cluster 2) against HEAD
# without. Builds into DIR (sm_90a) matmul_build.sh's layers and apps with
# clusters (ring_before_wait_build.sh's widths, TP 2 and 4, the decoders),
# then HEAD's MLP block and decoders without them as libmlpH_4096x7168.so
# and libdecH_<widths>.so.
#   bench/device/cluster_build.sh target/cl
#   (device) bash bench/device/cluster_h200.sh target/cl
out=${1:?usage: cluster_build.sh DIR}
set -euo pipefail
cd "$(dirname "$0")/../.."
export WIDTHS="4096x7168 5120x1728 3072x8192 2064x1000" TP_WORLDS="2 4" \
  DECODER_WIDTHS="4096x2048x7168 4096x512x1792" \
  LAYER_FLAGS="--chip sm_90a --matmul-wgmma-gemv-cluster 2"
bench/device/matmul_build.sh "$out"
bench/device/baseline_layers.sh "$out" mlpH decH
rm -rf "$out/symm-gpu-tests"
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
