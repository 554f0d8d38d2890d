# Sourced by build scripts that add variants of the MLP block beside
# matmul_build.sh's layers in $out (run from the repository root, after
# matmul_build.sh built target/release): `mlp_variant NAME D F WORLD
# [symm-compile flags...]` compiles examples/llama_mlp.mlir at hidden D, MLP
# width F a rank and WORLD ranks for sm_90a into $out/layers/libNAME.so,
# linked against the runtime beside it. The environment of the call reaches
# symm-compile (a scratch patch's SYMM_EXP_* variables).
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
mlp_variant() {
  local name=$1 d=$2 f=$3 world=$4 src
  shift 4
  src=$(mktemp -d)
  sed -e "s/world_size(2)/world_size($world)/" -e "s/4096/$d/g" -e "s/7168/$f/g" \
    examples/llama_mlp.mlir > "$src/mlp.mlir"
  target/release/symm-compile --chip sm_90a "$src/mlp.mlir" -o "$src/mlp.o" "$@"
  c++ -shared -o "$out/layers/lib$name.so" "$src/mlp.o" -L"$out/layers" -lsymm_runtime \
    -Wl,-rpath,'$ORIGIN'
  rm -rf "$src"
}
