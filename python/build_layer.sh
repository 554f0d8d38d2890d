#!/usr/bin/env bash
# Builds a compiled layer's shared library for the Python package:
#   python/build_layer.sh PROGRAM.mlir OUT_DIR [RUNTIME_DIR]
# compiles PROGRAM.mlir with symm-compile and links the object against
# libsymm_runtime.so (from RUNTIME_DIR, default the checkout's
# target/release, wherever this runs from), which it copies beside the
# layer: OUT_DIR/lib<stem>.so finds it through its rpath ($ORIGIN). The
# signature file OUT_DIR/<stem>.json (for symm.load) goes beside the header. SYMM_COMPILE_FLAGS adds
# symm-compile options and LAYER_NAME renames the library (lib<name>.so),
# to build a layer twice with different options.
set -euo pipefail
program=${1:?usage: build_layer.sh PROGRAM.mlir OUT_DIR [RUNTIME_DIR]}
out=${2:?usage: build_layer.sh PROGRAM.mlir OUT_DIR [RUNTIME_DIR]}
runtime=${3:-$(cd "$(dirname "$0")/.." && pwd)/target/release}
stem=${LAYER_NAME:-$(basename "$program" .mlir)}
mkdir -p "$out"
# shellcheck disable=SC2086 # the flags are words
"$runtime/symm-compile" "$program" -o "$out/$stem.o" --emit=signature ${SYMM_COMPILE_FLAGS:-}
# The runtime under its SONAME (what the layer records) and the link name.
soname=$(readelf -d "$runtime/libsymm_runtime.so" | sed -n 's/.*soname: \[\(.*\)\]/\1/p')
cp "$runtime/libsymm_runtime.so" "$out/${soname:?libsymm_runtime.so has no SONAME}"
cp "$runtime/libsymm_runtime.so" "$out/libsymm_runtime.so" # a copy: device carries drop links
c++ -shared -o "$out/lib$stem.so" "$out/$stem.o" -L"$out" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
rm "$out/$stem.o"
echo "built $out/lib$stem.so (entry points: $out/$stem.h)"
