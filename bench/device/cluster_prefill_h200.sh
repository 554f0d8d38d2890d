#!/usr/bin/env bash
# Issue 32, session 45 (one H200): does the after-GEMV ring's fill before
# its wait still pay with clusters? The MLP block and the decoder at TP 2's
# widths, kernels per call in a CUDA graph (blocks_ab, 2 rounds, 2-16 rows):
#   mlp/dec        HEAD: clusters of 2, 8 stages filled before the wait
#   mlpH/decH      --matmul-wgmma-gemv-cluster 1 (no clusters)
#   mlpnf/decnf    clusters of 2, no fill before the wait
#                  (cluster_prefill.patch: AFTER_GEMV_WGMMA.fills_before_wait false)
#   mlpnf1/decnf1  the same without clusters
# Build (here): cluster_build.sh's layers for mlp/mlpH/dec/decH and its
# runtime and symm-launch, then baseline_layers.sh DIR mlpnf decnf and
# DIR mlpnf1 decnf1 --matmul-wgmma-gemv-cluster 1 with the patch applied.
#   bash bench/device/cluster_prefill_h200.sh target/nf
B=${1:-target/nf}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
DECODERS=4096x2048x7168 ROUNDS=2 blocks_ab "mlpH:decH mlp:dec mlpnf:decnf mlpnf1:decnf1" 2,8,16 2,8,16 2>&1 \
  | grep -v Warning | tee "$OUT/timing.log"
