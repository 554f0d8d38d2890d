#!/usr/bin/env bash
# Builds what shared_gpu_checks.sh runs into DIR: the Llama apps
# (llama_mlp, llama_attn_out, llama_decoder) compiled for tensor-parallel
# 2, 4 and 8 (DIR/wW/), the error paths' apps (DIR/w2/), row_ops,
# symm-launch and symm-gpu-tests. About 120 MB: carry it as a tar.xz
# (about 5 MB; the device's command unpacks it).
#
#   bench/device/shared_gpu_build.sh target/gN
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: shared_gpu_build.sh DIR}
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
bench/model/build_apps.sh "$out"
rm -f "$out/math_accuracy"
mkdir -p "$out/w2" "$out/src/custom"
mv "$out"/{llama_mlp,llama_attn_out,llama_decoder} "$out/w2/"
# The error paths' apps (world 2): planted faults, PTX the driver
# refuses, programs compiled for other shapes or world sizes, the Rust
# twin, CUDA-graph partitions, the hand-written reduce-scatter.
mv "$out"/{llama_mlp_bad_ptx,llama_mlp_rust,partitioned,tp_mlp,tp_mlp_m128,tp_mlp_w4} "$out/w2/"
compile=target/release/symm-compile
$compile examples/custom_kernel/reduce_scatter.mlir -o "$out/src/custom/reduce_scatter.o"
c++ -O2 -std=c++17 -I runtime/include -I examples/cpp -I "$out/src/custom" \
  examples/custom_kernel/reduce_scatter.cpp "$out/src/custom/reduce_scatter.o" \
  target/release/libsymm_runtime.a -lpthread -ldl -lm -o "$out/w2/reduce_scatter"
strip "$out/w2/reduce_scatter"
# Tensor-parallel W: F / W columns of gate and up (rows of down), D / W
# attention features (rows of o_proj) per rank.
for world in 4 8; do
  for layer in llama_mlp llama_attn_out llama_decoder; do
    dir=$out/src/w$world/$layer
    mkdir -p "$dir" "$out/w$world"
    sed -e "s/world_size(2)/world_size($world)/" -e "s/7168/$((14336 / world))/g" \
      -e "s/2048x4096xbf16/$((4096 / world))x4096xbf16/g" \
      -e "s/?x2048xbf16/?x$((4096 / world))xbf16/g" examples/$layer.mlir > "$dir/$layer.mlir"
    grep -q "world_size($world)" "$dir/$layer.mlir"
    $compile "$dir/$layer.mlir" -o "$dir/$layer.o"
    c++ -O2 -std=c++17 -I runtime/include -I "$dir" examples/cpp/$layer.cpp "$dir/$layer.o" \
      target/release/libsymm_runtime.a -lpthread -ldl -lm -o "$out/w$world/$layer"
    strip "$out/w$world/$layer"
  done
done
rm -rf "$out/src"
echo "built into $out ($(du -sh "$out" | cut -f1)): $(cd "$out" && find . -type f | sort | tr '\n' ' ')"
