#!/usr/bin/env bash
# Issue 32, session 42: the after-GEMV wgmma ring at other models' widths
# (where the down projection's two slices make a full grid and are whole
# stages of 128 rows): the MLP block at world size 1, sm_90a, with the rule
# (ring_<D>x<F>) and without (--no-matmul-wgmma-gemv-after-gemv,
# noring_<D>x<F>), into DIR. WIDTHS: 8192x14336 (Llama-3-70B at TP 2),
# 6656x8960 (LLaMA-30B at TP 2), 5120x6912 (Qwen2.5-32B-like at TP 4) unless set.
#   bench/device/ring_widths_build.sh target/rw
#   (device) bash bench/device/ring_widths_h200.sh target/rw
out=${1:?usage: ring_widths_build.sh DIR}
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build -q --release -p symm-compile -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
mkdir -p "$out/layers"
cp target/release/symm-launch "$out/"
soname=$(readelf -d target/release/libsymm_runtime.so | sed -n 's/.*soname: \[\(.*\)\]/\1/p')
cp target/release/libsymm_runtime.so "$out/layers/$soname"
cp target/release/libsymm_runtime.so "$out/layers/"
src=$(mktemp -d)
for w in ${WIDTHS:-8192x14336 6656x8960 5120x6912}; do
  sed -e 's/world_size(2)/world_size(1)/' -e "s/4096/${w%x*}/g" -e "s/7168/${w#*x}/g" \
    examples/llama_mlp.mlir > "$src/$w.mlir"
  for v in ring noring; do
    flags=(--chip sm_90a)
    [[ $v == noring ]] && flags+=(--no-matmul-wgmma-gemv-after-gemv)
    target/release/symm-compile "$src/$w.mlir" -o "$src/${v}_$w.o" "${flags[@]}" --remarks 2>&1 \
      | grep -o "take the wgmma GEMV's 8-stage ring.*drains\|keeps the register-streaming GEMV.*" | sed "s/^/$v $w: /" || true
    c++ -shared -o "$out/layers/lib${v}_$w.so" "$src/${v}_$w.o" -L"$out/layers" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
  done
done
rm -rf "$src"
strip "$out"/layers/*.so
echo "built into $out ($(du -sh "$out" | cut -f1))"
