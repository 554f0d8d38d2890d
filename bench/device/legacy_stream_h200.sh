#!/usr/bin/env bash
# Session 23, one H200: asynchronous calls on the legacy default stream
# (CU_STREAM_LEGACY), which the runtime now takes as the call's stream,
# capturing the call's CUDA graphs on its own stream and replaying them on
# the legacy one (python/symm passes torch's default stream so, instead of
# joining a side stream to it by events).
#   - the C++ Llama apps with --stream=runtime and --stream=legacy: each
#     count's output against the f32 reference, the 8-layer async chain,
#     the same async call run / captured / replayed (bit for bit against
#     the synchronizing call); world size 1 and TP 2 with both ranks on the
#     GPU; a planted asynchronous fault on the legacy stream;
#   - bench/model/stream_join.py: the block on the legacy stream (checked
#     against torch's f32 reference and bit for bit against a call on a
#     stream of its own), then µs per call: legacy, the old event join, a
#     stream of its own, in torch's graph;
#   - symm-gpu-tests at world size 1 and TP 2 sharing the GPU.
#   (here)   WIDTHS=4096x7168 TP_WORLDS=2 bash bench/device/matmul_build.sh target/ls
#   (device) bash bench/device/legacy_stream_h200.sh target/ls
set -uo pipefail
B=${1:?usage: legacy_stream_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
{
  run python3 bench/model/reference.py --out /tmp/ref --m 1 4 9 16 17
  for stream in runtime legacy; do
    run timeout 150 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=1,4,16 --iterations=20 --stream=$stream
    run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,9,17 --iterations=5 --stream=$stream
  done
  run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=1,9,17 --iterations=5
  run timeout 60 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --plant-fault=async --stream=legacy
  run timeout 60 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --stream=sideways
} 2>&1 | tee "$OUT/legacy_apps.log"
SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
  run timeout 150 "$B/symm-launch" -n 1 python3 bench/model/stream_join.py "$L/libmlp_4096x7168.so" 4096 7168 \
  --tokens 1,16 --rounds 3 2>&1 | tee "$OUT/stream_join.log"
{
  run timeout 120 "$B/symm-launch" -n 1 "$B/symm-gpu-tests"
  run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/gpu_tests.log"
echo "apps: $(grep -c '^PASS\|\] PASS' "$OUT/legacy_apps.log") PASS, $(grep -c 'FAIL' "$OUT/legacy_apps.log") FAIL"
