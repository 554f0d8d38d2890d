#!/usr/bin/env bash
# Issue 32's "the generated matmul alone reads its weight at least as fast
# as cuBLAS on the same shape" on one H200 at world size 1: the MLP block
# (4096/7168, a TP-2 rank) forced generated (default kernels, and the
# opt-in TMA GEMV for the down projection) and forced cuBLAS, programmatic
# launch off so that each kernel's span is its own work; µs and TB/s per
# kernel in a CUDA graph of 20 calls (matmul_check.py --profile), two rounds.
#   (here)   examples/llama_mlp.mlir at world_size(1) built by python/build_layer.sh as
#            target/a24/layers/libmlp_4096x7168.so and (--matmul-tma-gemv=4,4,128) libmlp_tma.so
#   (device) tar -xJf target/a24.tar.xz -C target && bash bench/device/alone_h200.sh target/a24
set -uo pipefail
B=${1:?usage: alone_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for way in "generated mlp_4096x7168" "generated mlp_tma" "library mlp_4096x7168"; do
    set -- $way
    echo "== round $round: SYMM_MATMUL=$1 SYMM_PDL=0 lib$2"
    SYMM_MATMUL=$1 SYMM_PDL=0 run py "$B/layers/lib$2.so" 4096 7168 --tokens 16 --profile 1,16
  done
done
