#!/usr/bin/env bash
# Issue 32, session 42: the after-GEMV wgmma ring (`wgmma-gemv-after-gemv`,
# on for --chip sm_90a) against the same build without it. Builds into DIR
# (sm_90a): matmul_build.sh's layers and apps at the widths below, TP 2 and
# 4, then the baseline layers mlp0_4096x7168 and dec0_<widths> with
# --no-matmul-wgmma-gemv-after-gemv (the kernels of HEAD before it).
#   bench/device/ring_before_wait_build.sh target/rb
#   (device) bash bench/device/ring_before_wait_h200.sh target/rb
out=${1:?usage: ring_before_wait_build.sh DIR}
set -euo pipefail
cd "$(dirname "$0")/../.."
export WIDTHS="4096x7168 5120x1728 3072x8192 2064x1000" TP_WORLDS="2 4" \
  DECODER_WIDTHS="4096x2048x7168 4096x512x1792" LAYER_FLAGS="--chip sm_90a"
bench/device/matmul_build.sh "$out"
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
src=$(mktemp -d)
base() { # name mlir
  target/release/symm-compile "$2" -o "$src/$1.o" --chip sm_90a --no-matmul-wgmma-gemv-after-gemv
  c++ -shared -o "$out/layers/lib$1.so" "$src/$1.o" -L"$out/layers" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
}
sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > "$src/mlp.mlir"
base mlp0_4096x7168 "$src/mlp.mlir"
for w in 4096x2048x7168 4096x512x1792; do
  IFS=x read -r d a f <<< "$w"
  sed -e "s/world_size(2)/world_size(1)/" -e "s/2048x4096xbf16/@A@x4096xbf16/g" \
    -e "s/?x2048xbf16/?x@A@xbf16/g" -e "s/4096/$d/g" -e "s/7168/$f/g" -e "s/@A@/$a/g" \
    examples/llama_decoder.mlir > "$src/dec_$w.mlir"
  base "dec0_$w" "$src/dec_$w.mlir"
done
rm -rf "$src" "$out/symm-gpu-tests"
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
