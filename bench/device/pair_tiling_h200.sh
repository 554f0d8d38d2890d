#!/usr/bin/env bash
# Issue 32, session 9, one H200: the pair's tensor-core tiling re-swept
# after the row-scale staging (target/pf from a scratch build with
# bench/device/pair_tiling_variants.patch: `base` HEAD's 8 k-groups and 2
# steps in flight, `kg4u2`/`kg4u3`/`kg4u4` 4 k-groups with 2-4 steps,
# `kg16` 16 k-groups, 1024 threads), forced generated, two rounds.
#   (device) bash bench/device/pair_tiling_h200.sh
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
B=target/pf
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
variant_rounds "${VARIANTS:-base kg4u2 kg4u3 kg4u4 kg16}" 2,16 2,8,16 2>&1 | tee "$OUT/variants.log"
