#!/usr/bin/env bash
# A sweep of the one-row GEMV's tiling on one GPU: the MLP block at world
# size 1 and widths D x F (WIDTHS, default 4096x7168; 4096x2048 makes the
# down projection the decoder's o_proj shape, K = 2048, N = 4096) built
# with --matmul-gemv COLUMNS,K_GROUPS,UNROLL (both kinds), the per-kernel
# profile at M = 1 (TOKENS=2,4 for others), generated way forced, and the
# library's way.
#   (here)   WIDTHS="4096x7168 4096x2048" bench/device/gemv_sweep.sh build DIR C,K,U ...
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
  for w in ${WIDTHS:-4096x7168}; do
    sed -e 's/world_size(2)/world_size(1)/' -e "s/4096/${w%x*}/g" -e "s/7168/${w#*x}/g" \
      examples/llama_mlp.mlir > /tmp/gemv_sweep_mlp.mlir
    for tiling in "$@"; do
      $release/symm-compile /tmp/gemv_sweep_mlp.mlir -o /tmp/gemv_sweep.o --matmul-gemv "$tiling"
      c++ -shared -o "$out/layers/libmlp_${w}_${tiling//,/_}.so" /tmp/gemv_sweep.o -L"$out/layers" \
        -lsymm_runtime -Wl,-rpath,'$ORIGIN'
    done
  done
  exit 0
fi
. bench/device/lib.sh
for lib in "$out"/layers/libmlp_*.so; do
  w=$(basename "$lib" | cut -d_ -f2)
  ways=generated
  [[ $lib == *_0_0_0.so ]] && ways="generated library"
  for way in $ways; do
    echo "== $(basename "$lib") $way"
    SYMM_MATMUL=$way SYMM_RUNTIME_LIB=$out/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
      timeout 120 "$out/symm-launch" -n 1 python3 bench/model/matmul_check.py "$lib" "${w%x*}" "${w#*x}" \
      --tokens "${TOKENS:-1}" --profile "${TOKENS:-1}"
  done
done
