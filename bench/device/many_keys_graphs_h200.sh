#!/usr/bin/env bash
# Session 26, one H200: many_keys.py with this session's runtime, its
# graphs on and off (SYMM_CUDA_GRAPHS), programmatic launch on and off, at
# 1, 32 and 80 layers (one token count) and 32 layers at 3 token counts. In
# many_keys_h200.sh the graphs replayed 80 argument sets in turn at 77 µs a
# call, while the cache forced to forget each (every call eager) took 51.8.
#   (device) bash bench/device/many_keys_graphs_h200.sh   (carry target/mk.tar.xz)
set -uo pipefail
tar -xJf target/mk.tar.xz -C target
. bench/device/lib.sh
nvidia_libraries
M=target/mk
keys() { local rt=$1; shift; SYMM_LOG=warn SYMM_RUNTIME_LIB=$M/$rt/libsymm_runtime.so PYTHONPATH=python:bench/model timeout 200 "$M/symm-launch" -n 1 python3 bench/model/many_keys.py "$M/$rt/libbase.so" 4096 7168 "$@"; }
for shape in "1 16" "32 16" "80 16" "32 1,16,17"; do
  for graphs in 1 0; do
    echo "== new layers=${shape% *} tokens=${shape#* } SYMM_CUDA_GRAPHS=$graphs"
    SYMM_CUDA_GRAPHS=$graphs SYMM_PDL=1 run keys new --layers "${shape% *}" --tokens "${shape#* }" --steps 10
  done
done
echo "== new layers=80 tokens=16 SYMM_CUDA_GRAPHS=1 SYMM_PDL=0"
SYMM_CUDA_GRAPHS=1 SYMM_PDL=0 run keys new --layers 80 --tokens 16 --steps 10
echo "== new layers=80 tokens=16 SYMM_CUDA_GRAPHS=0 SYMM_PDL=0"
SYMM_CUDA_GRAPHS=0 SYMM_PDL=0 run keys new --layers 80 --tokens 16 --steps 10
