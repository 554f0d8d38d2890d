#!/usr/bin/env bash
# Runs wgmma_prefetch_build.sh's variants on one H200 at world size 1: the
# 4096/7168 block forced generated, checked against torch's f32 reference
# at 2, 9, 16 and 17 rows, then its kernels per call in a CUDA graph of 20
# calls (matmul_check.py --profile) at 8 and 16 rows, programmatic launch
# on (the block as it runs; two rounds) and off (each kernel alone).
#   (device) tar -xJf target/wp.tar.xz -C target && bash bench/device/wgmma_prefetch_h200.sh target/wp
set -uo pipefail
B=${1:?usage: wgmma_prefetch_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
layer_checks_setup
variants=${VARIANTS:-base a90 wg wgp1k wgp2k wgpall}
for v in $variants; do
  echo "== $v checks"
  SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --tokens 2,9,16,17
done
pdl_profile_rounds "$variants" 8,16
