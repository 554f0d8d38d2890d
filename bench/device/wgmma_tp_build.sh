#!/usr/bin/env bash
# Builds what wgmma_tp_checks.sh runs into DIR (issue 32, session 16): the
# C++ Llama apps (llama_mlp, llama_decoder) at tensor-parallel 4 and 8
# compiled with --chip sm_90a --matmul-wgmma-gemv (their down projections
# and o_proj take the wgmma GEMV for calls of 17-128 rows where the shard's
# K allows), and symm-launch.
#   bench/device/wgmma_tp_build.sh target/tp
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: wgmma_tp_build.sh DIR}
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
release=target/release
cargo build -q --release -p symm-compile -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher
mkdir -p "$out"
cp $release/symm-launch "$out/"
for world in 4 8; do
  for layer in llama_mlp llama_decoder; do
    dir=$out/src/w$world/$layer
    mkdir -p "$dir" "$out/w$world"
    sed -e "s/world_size(2)/world_size($world)/" -e "s/7168/$((14336 / world))/g" \
      -e "s/2048x4096xbf16/$((4096 / world))x4096xbf16/g" \
      -e "s/?x2048xbf16/?x$((4096 / world))xbf16/g" examples/$layer.mlir > "$dir/$layer.mlir"
    grep -q "world_size($world)" "$dir/$layer.mlir"
    $release/symm-compile "$dir/$layer.mlir" -o "$dir/$layer.o" --chip sm_90a --matmul-wgmma-gemv --remarks \
      2> "$dir/remarks.txt"
    grep -c "wgmma" "$dir/remarks.txt" | sed "s|^|w$world $layer: remarks naming wgmma: |"
    c++ -O2 -std=c++17 -I runtime/include -I "$dir" examples/cpp/$layer.cpp "$dir/$layer.o" \
      $release/libsymm_runtime.a -lpthread -ldl -lm -o "$out/w$world/$layer"
    strip "$out/w$world/$layer"
  done
done
rm -rf "$out/src"
echo "built into $out ($(du -sh "$out" | cut -f1))"
