#!/usr/bin/env bash
# Issue 32, session 44: the wgmma GEMVs of 2 to 8 rows as m64n8k16 kernels
# (an 8-row ring before the 16-row one) against HEAD. Builds into DIR
# (sm_90a) ring_before_wait_build.sh's set with the 8-row kernels, then
# the MLP block and decoders without them (--no-matmul-wgmma-gemv-eight-rows:
# HEAD before, PTX identical) as DIR/layers/libmlpH_4096x7168.so and
# libdecH_<widths>.so. (Session 44's first device call ran a scratch build
# of the same kernels, byte-identical PTX, with HEAD's own layers as H.)
#   bench/device/eight_rows_build.sh target/e8
#   (device) bash bench/device/eight_rows_h200.sh target/e8
out=${1:?usage: eight_rows_build.sh DIR}
set -euo pipefail
cd "$(dirname "$0")/../.."
bench/device/ring_before_wait_build.sh "$out"
bench/device/baseline_layers.sh "$out" mlpH decH --no-matmul-wgmma-gemv-eight-rows
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
