#!/usr/bin/env bash
# Session 26, one H200, world size 1: the MLP block's matmuls alone
# against cuBLAS with the same weights every call (as session 24's
# alone_h200.sh) and with 3 weight copies in turn (matmul_check.py
# --profile-copies; as a model's layers read their own). On 2x H200 the
# generated kernels slowed with copies and cuBLAS's did not
# (2026-11-28-weight-copies-h200x2.md). Kernels per call in a CUDA graph at
# 1 and 16 rows, programmatic launch off (each kernel's span its own work),
# forced generated, forced cuBLAS and the 16-row wgmma GEMV (`wg`), two
# rounds.
#   (device) tar -xJf target/wp.tar.xz -C target && bash bench/device/alone_cold_h200.sh target/wp
set -uo pipefail
B=${1:?usage: alone_cold_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
layer_checks_setup
for round in 1 2; do
  for copies in 1 3; do
    for way in generated library; do
      echo "== base $way copies=$copies round $round"
      SYMM_PDL=0 SYMM_MATMUL=$way run py "$L/libbase.so" 4096 7168 --tokens 16 --profile 1,16 \
        --profile-copies "$copies"
    done
    if [[ $round == 1 ]]; then
      echo "== wg generated copies=$copies round $round"
      SYMM_PDL=0 SYMM_MATMUL=generated run py "$L/libwg.so" 4096 7168 --tokens 16 --profile 16 \
        --profile-copies "$copies"
    fi
  done
done
