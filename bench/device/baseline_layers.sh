#!/usr/bin/env bash
# Builds, into DIR/layers (whose runtime matmul_build.sh put there), the
# Llama MLP block 4096/7168 and the decoder half-layers at TP 2's and TP 8's
# widths (4096x2048x7168, 4096x512x1792) at world size 1 for sm_90a with
# symm-compile FLAGS, as lib<MLP>_4096x7168.so and lib<DEC>_<widths>.so:
# the baseline a device script times a build's layers against.
#   bench/device/baseline_layers.sh DIR MLP DEC FLAGS...
out=${1:?usage: baseline_layers.sh DIR MLP DEC FLAGS...}
mlp=${2:?} dec=${3:?}
shift 3
set -euo pipefail
cd "$(dirname "$0")/../.."
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
src=$(mktemp -d)
layer() { # name mlir
  target/release/symm-compile "$2" -o "$src/$1.o" --chip sm_90a "${FLAGS[@]}"
  c++ -shared -o "$out/layers/lib$1.so" "$src/$1.o" -L"$out/layers" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
}
FLAGS=("$@")
sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > "$src/mlp.mlir"
layer "${mlp}_4096x7168" "$src/mlp.mlir"
for w in 4096x2048x7168 4096x512x1792; do
  IFS=x read -r d a f <<< "$w"
  sed -e "s/world_size(2)/world_size(1)/" -e "s/2048x4096xbf16/@A@x4096xbf16/g" \
    -e "s/?x2048xbf16/?x@A@xbf16/g" -e "s/4096/$d/g" -e "s/7168/$f/g" -e "s/@A@/$a/g" \
    examples/llama_decoder.mlir > "$src/dec_$w.mlir"
  layer "${dec}_$w" "$src/dec_$w.mlir"
done
rm -rf "$src"
