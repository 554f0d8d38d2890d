#!/usr/bin/env bash
# A sweep of the one-row GEMV's tiling on one GPU: the MLP block at world
# size 1 built with --matmul-gemv COLUMNS,K_GROUPS,UNROLL (both kinds), the
# per-kernel profile at M = 1, generated way forced.
#   (here)   bench/device/gemv_sweep.sh build DIR C,K,U ...
#   (device) bash bench/device/gemv_sweep.sh run DIR
set -uo pipefail
cd "$(dirname "$0")/../.."
mode=${1:?usage: gemv_sweep.sh build|run DIR [TILINGS...]}
out=${2:?usage: gemv_sweep.sh build|run DIR [TILINGS...]}
shift 2
if [[ $mode == build ]]; then
  release=target/release
  mkdir -p "$out/layers"
  soname=$(readelf -d $release/libsymm_runtime.so | sed -n 's/.*soname: \[\(.*\)\]/\1/p')
  cp $release/libsymm_runtime.so "$out/layers/$soname"
  cp $release/libsymm_runtime.so "$out/layers/"
  cp $release/symm-launch "$out/"
  sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > /tmp/gemv_sweep_mlp.mlir
  for tiling in "$@"; do
    $release/symm-compile /tmp/gemv_sweep_mlp.mlir -o /tmp/gemv_sweep.o --matmul-gemv "$tiling"
    c++ -shared -o "$out/layers/libmlp_${tiling//,/_}.so" /tmp/gemv_sweep.o -L"$out/layers" \
      -lsymm_runtime -Wl,-rpath,'$ORIGIN'
  done
  exit 0
fi
. bench/device/lib.sh
for lib in "$out"/layers/libmlp_*.so; do
  echo "== $(basename "$lib")"
  SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$out/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 120 "$out/symm-launch" -n 1 python3 bench/model/matmul_check.py "$lib" 4096 7168 --tokens 1 --profile 1
done
