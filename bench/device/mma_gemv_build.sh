#!/usr/bin/env bash
# Builds what mma_gemv_h200.sh runs into DIR (issue 32, the tensor-core
# GEMV for 5 to 16 rows): everything matmul_build.sh builds (the MLP block
# at four widths, the C++ apps at world sizes 1 and 2), plus variants of
# the 4096/7168 block: the tensor-core GEMV's tilings (COLUMNS,K_GROUPS,
# UNROLL for both kinds), the block without it (the tensor-core kernel
# takes 2..16 rows as before), and the block where it takes every call of
# 2 to 16 rows (no 4-row CUDA-core GEMV).
#
#   bench/device/mma_gemv_build.sh target/mg
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: mma_gemv_build.sh DIR}
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
variant nomma --no-matmul-mma-gemv
variant mma_from2 --matmul-gemv-max-rows 1
for tiling in ${MMA_TILINGS:-64,16,1 64,12,1 64,8,1 64,8,3 64,8,4 64,4,4 128,4,2}; do
  variant "t${tiling//,/_}" --matmul-mma-gemv "$tiling"
done
strip "$out"/layers/*.so
rm -rf "$out/src"
echo "built into $out ($(du -sh "$out" | cut -f1))"
