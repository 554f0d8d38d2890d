#!/usr/bin/env bash
# Runs ahead_build.sh's variants on one H200 at world size 1: each checked
# forced generated against torch's f32 reference at 2, 8, 9, 16 and 17 rows
# (the 8192/3584 block too), then the kernels per call in a CUDA graph of 20
# calls at 8 and 16 rows, programmatic launch on (two rounds) and off.
#   (device) tar -xJf target/ah.tar.xz -C target && bash bench/device/ahead_h200.sh target/ah
set -uo pipefail
B=${1:?usage: ahead_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
layer_checks_setup
echo "== ptxas: the tensor-core GEMVs of each variant"
ptxas_resources "symm_matmul_[01]_mma16" "$B"/ptx/*.ptx
variants=${VARIANTS:-base a1 a2 a4 a8}
for v in $variants; do
  echo "== $v checks"
  SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --tokens 2,8,9,16,17
done
SYMM_MATMUL=generated run py "$L/liba4_8192x3584.so" 8192 3584 --tokens 2,9,16
pdl_profile_rounds "$variants" 8,16
