#!/usr/bin/env bash
# Issue 32, session 36: register GEMVs whose 64-column grid wastes a wave,
# run as 64-column bands with half the k-groups (half the threads) and two
# blocks an SM (.minnctapersm from the grid) instead of 128-column bands
# with one (the widening of waves.rs). Scratch patch, compile-time
# SYMM_EXP_NARROW / SYMM_EXP_CORESIDENT: git apply bench/device/narrow.patch
#   bench/device/narrow_build.sh target/nw
# builds HEAD's default (matmul_build.sh, TP 2 too) at the widths below and,
# beside its layers, libmlp_<w>_nar.so and libmlp_tp2_<w>_nar.so.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: narrow_build.sh DIR}
NARROW_WIDTHS=${NARROW_WIDTHS:-"6656x8960 3584x9472 5120x13824 8192x14336 5120x6912 4096x7168 2064x1000"}
WIDTHS="$NARROW_WIDTHS" TP_WORLDS=2 LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh "$out"
release=target/release
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
src=$(mktemp -d)
for w in $NARROW_WIDTHS; do
  for world in 1 2; do
    name=mlp_$w
    ((world > 1)) && name=mlp_tp${world}_$w
    sed -e "s/world_size(2)/world_size($world)/" -e "s/4096/${w%x*}/g" -e "s/7168/${w#*x}/g" \
      examples/llama_mlp.mlir > "$src/$name.mlir"
    SYMM_EXP_NARROW=1 SYMM_EXP_CORESIDENT=1 $release/symm-compile --chip sm_90a "$src/$name.mlir" -o "$src/$name.o"
    c++ -shared -o "$out/layers/lib${name}_nar.so" "$src/$name.o" -L"$out/layers" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
  done
done
strip "$out"/layers/*_nar.so
rm -rf "$src"
du -sh "$out"
