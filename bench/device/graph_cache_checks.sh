#!/usr/bin/env bash
# Session 26, one H200: the C++ apps built with this session's runtime
# (a function's argument sets share its graph buffers; up to 1024 sets,
# least recently used forgotten first) at world size 2 with the ranks on
# one GPU: the CUDA-graph partitions app (captures per argument set, device
# memory flat over 1000 calls), the Rust twin, and the Llama apps at 1-129
# tokens (each count its own set, sharing the arena), the decoder also
# with the cache held to 2 sets (SYMM_GRAPHS_PER_FUNCTION=2: sets forgotten
# and made again between counts).
#   (here)   bench/device/shared_gpu_build.sh target/g26; tar -cJf target/g26.tar.xz -C target g26
#   (device) tar -xJf target/g26.tar.xz -C target && bash bench/device/graph_cache_checks.sh target/g26
set -uo pipefail
B=${1:?usage: graph_cache_checks.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
export SYMM_TIMEOUT_S=20
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
launch2() { timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$@"; }
run python3 bench/model/reference.py --out /tmp/ref --m 1 16 17 33 128 129 --partitioned
run launch2 "$B/w2/partitioned" /tmp/ref --iterations=1
run launch2 "$B/w2/llama_mlp_rust" /tmp/ref
for layer in llama_mlp llama_decoder; do
  run launch2 "$B/w2/$layer" /tmp/ref --tokens=1,16,17,33,128,129 --iterations=3
done
SYMM_GRAPHS_PER_FUNCTION=2 run launch2 "$B/w2/llama_decoder" /tmp/ref --tokens=1,16,17,33,128,129 \
  --iterations=3
