#!/usr/bin/env bash
# Builds what tma_gemv_h200.sh runs into DIR (issue 32, session 8: the
# tensor-core GEMV whose weight the TMA streams, `tma16`, opt-in with
# --matmul-tma-gemv): everything matmul_build.sh builds (the MLP block at
# four widths, the C++ apps at world sizes 1 and 2) with it on, plus the
# 4096/7168 block without it (`notma`: the register-streaming `mma16`
# takes 2..16 rows, the default)
# and with other TMA tilings (TMA_TILINGS: K_GROUPS,STAGES,STAGE_ROWS for
# both kinds, `libmlp_tK_S_R.so`).
#
#   bench/device/tma_gemv_build.sh target/tg && tar -cJf target/tg.tar.xz target/tg
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: tma_gemv_build.sh DIR}
LAYER_FLAGS=--matmul-tma-gemv bench/device/matmul_build.sh "$out"
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
mkdir -p "$out/src"
sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > "$out/src/mlp.mlir"
target/release/symm-compile "$out/src/mlp.mlir" -o "$out/src/notma.o"
c++ -shared -o "$out/layers/libmlp_notma.so" "$out/src/notma.o" -L"$out/layers" -lsymm_runtime \
  -Wl,-rpath,'$ORIGIN'
# The pair without its RMSNorm prologue (timing only: its check fails),
# with and without the TMA GEMV.
sed -e 's/linalg.matmul ins(%xn, /linalg.matmul ins(%x, /' "$out/src/mlp.mlir" > "$out/src/nonorm.mlir"
for flags in --matmul-tma-gemv ""; do
  tag=nonorm${flags:-_notma}
  tag=${tag/--matmul-tma-gemv/}
  target/release/symm-compile "$out/src/nonorm.mlir" -o "$out/src/$tag.o" $flags
  c++ -shared -o "$out/layers/libmlp_$tag.so" "$out/src/$tag.o" -L"$out/layers" -lsymm_runtime \
    -Wl,-rpath,'$ORIGIN'
done
for tiling in ${TMA_TILINGS:-1,4,64 2,4,64 4,5,64 2,8,32 2,6,64 1,8,32}; do
  tag=t${tiling//,/_}
  target/release/symm-compile "$out/src/mlp.mlir" -o "$out/src/$tag.o" --matmul-tma-gemv "$tiling"
  c++ -shared -o "$out/layers/libmlp_$tag.so" "$out/src/$tag.o" -L"$out/layers" -lsymm_runtime \
    -Wl,-rpath,'$ORIGIN'
done
strip "$out"/layers/*.so
rm -rf "$out/src"
echo "built into $out ($(du -sh "$out" | cut -f1))"
