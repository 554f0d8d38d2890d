#!/usr/bin/env bash
# Runs down_split_build.sh's variants on one H200 at world size 1: the
# MLP block (4096/7168) forced generated, checked against torch's f32
# reference at 1, 9, 16 rows, and its kernels per call in a CUDA graph of
# 20 calls (matmul_check.py --profile) at 1 and 16 rows, programmatic
# launch off (each kernel's span its own work: the matmul alone) and on
# (the block as it runs); then cuBLAS (SYMM_MATMUL=library) for the same.
#   (device) tar -xJf target/ds.tar.xz -C target && bash bench/device/down_split_h200.sh target/ds
set -uo pipefail
B=${1:?usage: down_split_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
layer_checks_setup
# (Session 25's run called ptxas by name, which is not on the PATH there,
# and printed nothing; ptxas_resources finds it beside nvcc.)
echo "== ptxas: the down projection's kernels of each variant"
ptxas_resources "symm_matmul_1_mma16" "$B"/ptx/*.ptx
for pdl in 0 1; do
  for v in ${VARIANTS:-base s2k8 s4k8 s4k8u3 s8k4 s8k4u4 wg16}; do
    echo "== $v SYMM_PDL=$pdl"
    SYMM_MATMUL=generated SYMM_PDL=$pdl run py "$L/lib$v.so" 4096 7168 --tokens 1,9,16 --profile 1,16
  done
  echo "== cuBLAS SYMM_PDL=$pdl"
  SYMM_MATMUL=library SYMM_PDL=$pdl run py "$L/libbase.so" 4096 7168 --tokens 16 --profile 16
done
