#!/usr/bin/env bash
# Builds what gemv_h200.sh runs into DIR (issue 32, the one-row GEMV):
# everything matmul_build.sh builds (the MLP block at four widths, the C++
# apps at world sizes 1 and 2), plus variants of the 4096/7168 block for a
# sweep of the GEMV's tiling and of the split-K slices.
#
#   bench/device/gemv_build.sh target/gv
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: gemv_build.sh DIR}
bench/device/matmul_build.sh "$out"
release=target/release
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
mkdir -p "$out/src"
sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > "$out/src/mlp.mlir"
variant() { # tag [symm-compile flags...]
  local tag=$1
  shift
  $release/symm-compile "$out/src/mlp.mlir" -o "$out/src/$tag.o" "$@"
  c++ -shared -o "$out/layers/libmlp_$tag.so" "$out/src/$tag.o" -L"$out/layers" -lsymm_runtime \
    -Wl,-rpath,'$ORIGIN'
}
variant nogemv --no-matmul-gemv
variant s4 --split-k-slices 4
variant s8 --split-k-slices 8
variant c32 --matmul-gemv 32,0,0
variant k64u8 --matmul-gemv 0,64,8
variant k32u4 --matmul-gemv 0,32,4
variant k64u4 --matmul-gemv 0,64,4
variant k32u8 --matmul-gemv 0,32,8
variant k16u8 --matmul-gemv 0,16,8
variant s4k32u8 --split-k-slices 4 --matmul-gemv 0,32,8
strip "$out"/layers/*.so
rm -rf "$out/src"
echo "built into $out ($(du -sh "$out" | cut -f1))"
