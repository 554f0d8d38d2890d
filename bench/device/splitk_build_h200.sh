#!/usr/bin/env bash
# Builds what splitk_h200.sh runs into DIR: the Llama MLP block, the
# attention-output block (o_proj, all-reduce, residual, next RMSNorm) and
# the decoder layer's tensor-parallel half (both, the MLP's all-reduce
# followed by the next RMSNorm) at world size 1 (full widths: F = 14336,
# 4096 attention features), each
# compiled with the split-K prologue (split), without it
# (--split-k-max-rows=0: nosplit) and with the split and the staged
# kernels forced (--lamport-max-bytes=0: staged), linked with their C++
# apps; plus symm-launch and symm-gpu-tests.
#
#   [LAYERS="llama_decoder"] bench/device/splitk_build_h200.sh target/sN
#
# (all three layers' nine binaries come to about 70 MB, more than a device
# call carries: build a subset with LAYERS)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: splitk_build_h200.sh DIR}
release=target/release
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
cargo build -q --release -p symm-compile -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher
mkdir -p "$out/src"
cp $release/{symm-launch,symm-gpu-tests} "$out/"
layers=${LAYERS:-llama_mlp llama_attn_out llama_decoder}
# World size 1: every shard is the whole matrix.
for layer in $layers; do
  sed -e 's/world_size(2)/world_size(1)/' -e 's/7168/14336/g' -e 's/2048x4096xbf16/4096x4096xbf16/g' \
    -e 's/?x2048xbf16/?x4096xbf16/g' examples/$layer.mlir > "$out/src/$layer.mlir"
done
for layer in $layers; do
  grep -q 'world_size(1)' "$out/src/$layer.mlir"
  for variant in split nosplit staged; do
    flags=()
    case $variant in
      nosplit) flags=(--split-k-max-rows=0) ;;
      staged) flags=(--lamport-max-bytes=0) ;;
    esac
    dir="$out/src/$variant"
    mkdir -p "$dir"
    $release/symm-compile "${flags[@]}" "$out/src/$layer.mlir" -o "$dir/$layer.o"
    c++ -O2 -std=c++17 -I runtime/include -I "$dir" -I examples/cpp "examples/cpp/$layer.cpp" \
      "$dir/$layer.o" $release/libsymm_runtime.a -lpthread -ldl -lm -o "$out/${layer}_w1_$variant"
  done
done
strip "$out"/llama_* "$out"/symm-*
rm -rf "$out/src"/*/
echo "built into $out ($(du -sh "$out" | cut -f1)): $(ls "$out" | tr '\n' ' ')"
