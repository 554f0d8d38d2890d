#!/usr/bin/env bash
# Runs pair_cold_build.sh's tilings on one H200 at world size 1: the MLP
# block's kernels per call at 16 rows in a CUDA graph, forced generated,
# programmatic launch on (as in the layer), with 3 weight copies taken in
# turn (two rounds) and with the same weights (one round); each variant
# first checked against torch's f32 reference at 16 rows. The variants
# whose pair spills no more than 60 bytes with ptxas 12.8 (here):
# 64,4,4 (206 registers), 64,6,3 (166), 64,8,3 (60 B spilled), 64,8,4 (32 B),
# 128,4,3 (12 B); 64,12,2, 64,16,2 and 128,8,2 spill 224-364 B.
#   (device) tar -xJf target/pc.tar.xz -C target && bash bench/device/pair_cold_h200.sh target/pc
set -uo pipefail
B=${1:?usage: pair_cold_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
layer_checks_setup
variants=${VARIANTS:-base t64_4_4 t64_6_3 t64_8_3 t64_8_4 t128_4_3}
for pass in 3:1 3:2 1:1; do
  for v in $variants; do
    echo "== $v copies=${pass%:*} round ${pass#*:}"
    SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --tokens 16 --profile 16 \
      --profile-copies "${pass%:*}"
  done
done
