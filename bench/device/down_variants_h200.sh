#!/usr/bin/env bash
# Issue 32, session 9, one H200: the down projection's tensor-core GEMV
# (mma16, a split-K single) against cuBLAS's 16.5-16.8 µs: variants of a
# scratch build (target/pf; `base` HEAD, `stage` rows of `a` staged in
# shared memory as the pair's are, `su3` 3 steps in flight, `sk8` 8
# k-groups, `stagesu3` both, `sl4k8` 4 split-K slices of 8 k-groups), the
# block per call in a CUDA graph, forced generated, two rounds.
#   (device) bash bench/device/down_variants_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
B=target/pf
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
variant_rounds "${VARIANTS:-base stage su3 sk8 stagesu3 sl4k8}" 2,16 2,8,16 2>&1 | tee "$OUT/variants.log"
