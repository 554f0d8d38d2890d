#!/usr/bin/env bash
# Session 26, one H200, world size 1: a model's pattern of calls to one
# compiled layer (bench/model/many_keys.py: the Llama MLP block at the
# TP-2 shard, each layer its own weights, token counts in turn), with
# session 25's runtime (`old`: 64 graphs a function, the oldest made
# forgotten first) and this session's (`new`: 1024 argument sets and 1 GiB
# of buffers a function, least recently used first; also with
# SYMM_GRAPHS_PER_FUNCTION=64, which must warn once, and =0, which must
# fail with a clear error). The same layer library either way.
#   (here)   target/mk: old/ and new/ each hold target/wp's libbase.so (the 4096/7168 block at
#            world size 1) beside the runtime; symm-launch. tar -cJf target/mk.tar.xz -C target mk
#   (device) tar -xJf target/mk.tar.xz -C target && bash bench/device/many_keys_h200.sh target/mk
set -uo pipefail
M=${1:?usage: many_keys_h200.sh DIR}
. "$(dirname "$0")/lib.sh"
nvidia_libraries
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
keys() { # runtime [many_keys.py options]
  local rt=$1
  shift
  SYMM_LOG=${SYMM_LOG:-info} SYMM_RUNTIME_LIB=$M/$rt/libsymm_runtime.so PYTHONPATH=python:bench/model \
    timeout 200 "$M/symm-launch" -n 1 python3 bench/model/many_keys.py "$M/$rt/libbase.so" 4096 7168 "$@"
}
for shape in "32 16" "80 16" "32 1,16,17"; do
  for rt in old new; do
    echo "== $rt layers=${shape% *} tokens=${shape#* }"
    run keys "$rt" --layers "${shape% *}" --tokens "${shape#* }" 2>&1 | grep -v "capturing a CUDA graph\|matmul site\|matmul pair"
  done
done
echo "== new, SYMM_GRAPHS_PER_FUNCTION=64 (must warn once)"
SYMM_GRAPHS_PER_FUNCTION=64 run keys new --layers 80 --tokens 16 2>&1 | grep -v "capturing a CUDA graph\|matmul site\|matmul pair"
echo "== new, SYMM_GRAPHS_PER_FUNCTION=0 (must fail with the variable named)"
SYMM_GRAPHS_PER_FUNCTION=0 run keys new --layers 2 --tokens 16 --steps 1
