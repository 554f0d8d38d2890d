#!/usr/bin/env bash
# Issue 32, session 44 (scratch, not kept: apply
# bench/device/consumer_groups.patch first, on 8d526dd; its SYMM_EXP_WG sets
# the wgmma GEMVs' consumer warpgroups, GemvTile::k_groups): the MLP block and the
# decoders with one consumer warpgroup (mlp, dec: HEAD's kernels) and with
# two taking the ring's stages in turn (mlpW, decW), into DIR, with the
# runtime and symm-launch of build RUNTIME_FROM (a matmul_build.sh DIR).
#   bench/device/consumer_groups_build.sh target/wg target/e8
#   (device) bash bench/device/consumer_groups_h200.sh target/wg
out=${1:?usage: consumer_groups_build.sh DIR RUNTIME_FROM}
from=${2:?usage: consumer_groups_build.sh DIR RUNTIME_FROM}
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q --release -p symm-compile
mkdir -p "$out/layers"
cp "$from"/symm-launch "$out/"
cp "$from"/layers/libsymm_runtime.so* "$out/layers/"
env -u SYMM_EXP_WG bench/device/baseline_layers.sh "$out" mlp dec
SYMM_EXP_WG=2 bench/device/baseline_layers.sh "$out" mlpW decW
cp "$out/layers/libmlpW_4096x7168.so" "$out/layers/libmlp_4096x7168_wg2.so"
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
