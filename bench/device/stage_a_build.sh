#!/usr/bin/env bash
# Builds what stage_a_h200.sh runs into DIR (issue 32, session 13: calls of
# 2-8 rows run `mma16`, which reads `a` from global memory with each step
# where there is no prologue, and calls of 9-16 rows `mma16_staged`, which
# stages it in shared memory first; mma-gemv-stage-a, on by default):
# everything
# matmul_build.sh builds, plus at world size 1
#   - the 8192/3584 block (the pair streams its norm: 16 staged rows of
#     K = 8192 do not fit);
#   - the 4096/7168 block with one `mma16` for 2-16 rows, `a` read from
#     global memory where there is no prologue (`single16`,
#     --no-matmul-mma-stage-a: the build before), and both builds without
#     the pair's RMSNorm (`nonorm`, `nonorm_single16`: a pair with no
#     prologue, as the decoder's is; timing only, their checks fail).
#
#   bench/device/stage_a_build.sh target/sa && tar -cJf target/sa.tar.xz -C target sa
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: stage_a_build.sh DIR}
bench/device/matmul_build.sh "$out"
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
mkdir -p "$out/src"
layer() { # name mlir [symm-compile flags...]
  local name=$1 mlir=$2
  shift 2
  target/release/symm-compile "$mlir" -o "$out/src/$name.o" "$@"
  c++ -shared -o "$out/layers/lib$name.so" "$out/src/$name.o" -L"$out/layers" -lsymm_runtime \
    -Wl,-rpath,'$ORIGIN'
}
sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > "$out/src/mlp.mlir"
sed -e 's/4096/8192/g' -e 's/7168/3584/g' "$out/src/mlp.mlir" > "$out/src/mlp_8192x3584.mlir"
layer mlp_8192x3584 "$out/src/mlp_8192x3584.mlir"
layer single16 "$out/src/mlp.mlir" --no-matmul-mma-stage-a
sed -e 's/linalg.matmul ins(%xn, /linalg.matmul ins(%x, /' "$out/src/mlp.mlir" > "$out/src/nonorm.mlir"
layer nonorm "$out/src/nonorm.mlir"
layer nonorm_single16 "$out/src/nonorm.mlir" --no-matmul-mma-stage-a
strip "$out"/layers/*.so
rm -rf "$out/src"
echo "built into $out ($(du -sh "$out" | cut -f1))"
