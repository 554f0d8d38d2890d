#!/usr/bin/env bash
# Issue 32, sessions 44-45: the wgmma GEMVs in clusters that share `a` by
# TMA multicast against the same compiler with none. Builds into DIR
# (sm_90a) matmul_build.sh's layers and apps (ring_before_wait_build.sh's
# widths, TP 2 and 4, the decoders) with symm-compile's default clusters
# (the after-GEMV ring's 2), or every wgmma GEMV in clusters of CLUSTER
# where set (session 45's call 1: CLUSTER=2); then the MLP block and
# decoders with --matmul-wgmma-gemv-cluster 1 (none) as
# libmlpH_4096x7168.so and libdecH_<widths>.so.
#   bench/device/cluster_build.sh target/cl
#   (device) bash bench/device/cluster_h200.sh target/cl
out=${1:?usage: cluster_build.sh DIR}
set -euo pipefail
cd "$(dirname "$0")/../.."
export WIDTHS="4096x7168 5120x1728 3072x8192 2064x1000" TP_WORLDS="2 4" \
  DECODER_WIDTHS="4096x2048x7168 4096x512x1792" \
  LAYER_FLAGS="--chip sm_90a${CLUSTER:+ --matmul-wgmma-gemv-cluster $CLUSTER}"
bench/device/matmul_build.sh "$out"
bench/device/baseline_layers.sh "$out" mlpH decH --matmul-wgmma-gemv-cluster 1
rm -rf "$out/symm-gpu-tests"
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
