# Sourced by the session-13 build scripts (stream_norm_build.sh,
# stage_a_build.sh): builds everything matmul_build.sh builds into $out,
# then the world-size-1 sources in $out/src: mlp.mlir (the 4096/7168
# block), nonorm.mlir (the same without the pair's RMSNorm, timing only) and
# the 8192/3584 block as a layer (libmlp_8192x3584.so). `layer NAME MLIR
# [FLAGS...]` compiles a variant into $out/layers/libNAME.so; `finish`
# strips the layers and removes the sources.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
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
finish() {
  strip "$out"/layers/*.so
  rm -rf "$out/src"
  echo "built into $out ($(du -sh "$out" | cut -f1))"
}
sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > "$out/src/mlp.mlir"
sed -e 's/4096/8192/g' -e 's/7168/3584/g' "$out/src/mlp.mlir" > "$out/src/mlp_8192x3584.mlir"
sed -e 's/linalg.matmul ins(%xn, /linalg.matmul ins(%x, /' "$out/src/mlp.mlir" > "$out/src/nonorm.mlir"
layer mlp_8192x3584 "$out/src/mlp_8192x3584.mlir"
