#!/usr/bin/env bash
# Builds what matmul_sweep.sh runs into DIR: the Llama MLP block at world
# size 1 as Python layers, at the whole MLP (4096 x 14336) and at a TP-2
# rank's shard (4096 x 7168), compiled with each tiling of the generated
# matmul kernels in TILES (BN,BK,STAGES,WARPS), and the runtime.
#
#   [TILES="64,64,4,4 64,128,4,8"] bench/device/matmul_sweep_build.sh target/sN
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: matmul_sweep_build.sh DIR}
release=target/release
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
cargo build -q --release -p symm-compile -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher
mkdir -p "$out/src" "$out/layers"
cp $release/symm-launch "$out/"
soname=$(readelf -d $release/libsymm_runtime.so | sed -n 's/.*soname: \[\(.*\)\]/\1/p')
cp $release/libsymm_runtime.so "$out/layers/$soname"
cp $release/libsymm_runtime.so "$out/layers/" # a copy: carries drop links
for w in ${WIDTHS:-4096x14336 4096x7168}; do
  sed -e 's/world_size(2)/world_size(1)/' -e "s/4096/${w%x*}/g" -e "s/7168/${w#*x}/g" \
    examples/llama_mlp.mlir > "$out/src/mlp_$w.mlir"
  for tile in ${TILES:-64,64,4,4 64,128,4,4 64,128,4,8 64,256,3,8 64,128,6,8}; do
    name=mlp_${w}_${tile//,/_}
    $release/symm-compile "$out/src/mlp_$w.mlir" -o "$out/src/$name.o" --matmul-tile "$tile"
    c++ -shared -o "$out/layers/lib$name.so" "$out/src/$name.o" -L"$out/layers" -lsymm_runtime \
      -Wl,-rpath,'$ORIGIN'
  done
done
strip "$out"/symm-* "$out"/layers/*.so
rm -rf "$out/src"
echo "built into $out ($(du -sh "$out" | cut -f1))"
