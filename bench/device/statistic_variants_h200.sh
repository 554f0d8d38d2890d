#!/usr/bin/env bash
# Issue 32, session 10, one H200: is the pair's staging pass at 16 rows
# bound by the statistic's arithmetic? Layers of a scratch build
# (bench/device/statistic_variants.patch, compile-time SYMM_EXP_STAT):
# base (HEAD), none (no statistic: wrong on purpose, timing only), fma
# (the sum of squares as one fma per element); the 4096/7168 block at
# world size 1, forced generated, kernels per call in a CUDA graph, two
# rounds. target/st: symm-launch, the runtime and lib{base,none,fma}.so
# compiled from examples/llama_mlp.mlir at world size 1.
#   (device) bash bench/device/statistic_variants_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
B=target/st
export SYMM_TIMEOUT_S=20
nvidia-smi --query-gpu=name --format=csv,noheader
ab_rounds "base none fma" 2,8,16 2>&1 | tee "$OUT/stat.log"
