#!/usr/bin/env bash
# Session 22: builds what linear_mma_h200.sh runs into DIR: matmul_build.sh's
# linear blocks (bench/model/linear_mlp.mlir, weights stored n x k) at five
# widths, world size 1 and TP 2/4, the row-major 4096/7168 block beside them,
# and tiling variants of the tensor-core GEMV of n x k weights
# (passes/src/matmul/gemv_mma_linear.rs) as layers/liblinear_m<C>_<G>_<U>.so
# (--matmul-mma-gemv C,G,U on the 4096/7168 block), plus
# liblinear_few_4096x7168.so (--matmul-gemv-max-rows 4: the CUDA-core GEMV for
# 2-4 rows before it).
#   bench/device/linear_mma_build.sh target/lm && (cd target && tar -cJf lm.tar.xz lm)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: linear_mma_build.sh DIR}
rm -rf "$out"
WIDTHS=4096x7168 LINEAR_WIDTHS="4096x7168 3072x8192 2064x1000 5120x1728 1000x2064" \
  TP_WORLDS="2 4" bash bench/device/matmul_build.sh "$out"
src=$(mktemp -d)
sed -e "s/world_size(2)/world_size(1)/" bench/model/linear_mlp.mlir > "$src/linear.mlir"
variant() { # name [symm-compile flags...]
  local name=$1
  shift
  target/release/symm-compile "$src/linear.mlir" -o "$src/$name.o" "$@"
  c++ -shared -o "$out/layers/lib$name.so" "$src/$name.o" -L"$out/layers" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
  strip "$out/layers/lib$name.so"
}
for v in ${VARIANTS:-32,8,2 32,8,4 32,16,1 32,8,1 64,6,2}; do
  variant "linear_m${v//,/_}" --matmul-mma-gemv "$v"
done
variant linear_few_4096x7168 --matmul-gemv-max-rows 4
rm -rf "$src"
echo "variants: $(cd "$out/layers" && ls liblinear_m* liblinear_few* | tr '\n' ' ')"
