#!/usr/bin/env bash
# Issue 32, session 8, one H200: which part of the pair's prologue change
# (prologue_ab_h200.sh) cost time: `libmlp_4096x7168` all three parts (the
# row kept in its staged place by the statistic's pass, per-vector sum
# chains, the norm weight in 16-byte loads), `libmlp_a` the first two,
# `libmlp_b` the third only, `libmlp_old` none; forced generated, kernels
# per call in a CUDA graph, two rounds (target/pg.tar.xz).
#   (device) bash bench/device/prologue_variants_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
rm -rf target/pg && tar -xJf target/pg.tar.xz
B=target/pg L=$B/layers
py() { SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  timeout 150 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$@"; }
for round in 1 2; do
  for lib in mlp_4096x7168 mlp_a mlp_b mlp_old; do
    SYMM_MATMUL=generated run py "$L/lib$lib.so" 4096 7168 --tokens 16 --profile 2,16
  done
done 2>&1 | tee "$OUT/variants.log"
