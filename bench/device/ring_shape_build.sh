#!/usr/bin/env bash
# Issue 32, session 42 (scratch, with bench/device/ring_shape.patch applied:
# SYMM_EXP_RING="STAGES,STAGE_ROWS" reshapes the after-GEMV wgmma ring):
# the 4096/7168 block at world size 1 (sm_90a) with other rings of about
# the same bytes, into DIR beside ring_before_wait_build.sh's build in RB:
#   ring_before_wait_build.sh target/rb; git apply bench/device/ring_shape.patch
#   bench/device/ring_shape_build.sh target/rs target/rb
out=${1:?usage: ring_shape_build.sh DIR RB}
rb=${2:?usage: ring_shape_build.sh DIR RB}
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q --release -p symm-compile
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
mkdir -p "$out/layers"
cp "$rb/symm-launch" "$out/"
cp "$rb"/layers/{libsymm_runtime.so,libsymm_runtime.so.0.1,libmlp0_4096x7168.so,libmlp_4096x7168.so} "$out/layers/"
src=$(mktemp -d)
sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > "$src/mlp.mlir"
for ring in ${RINGS:-10,128 16,64 4,256 6,128 5,256}; do
  name=ring_${ring/,/x}
  SYMM_EXP_RING=$ring target/release/symm-compile "$src/mlp.mlir" -o "$src/$name.o" --chip sm_90a
  c++ -shared -o "$out/layers/lib$name.so" "$src/$name.o" -L"$out/layers" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
done
rm -rf "$src"
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
