#!/usr/bin/env bash
# Session 27, one H200: the runtime's pacing of graph replays on the legacy
# default stream (replay_pacer.rs: at most SYMM_LEGACY_GRAPHS_AHEAD replays
# queued; 16 by default when this first ran, 4 in the final runtime). many_keys_legacy_h200.sh measured 82.0 µs a call at 80 argument
# sets in turn on the legacy stream without it, 53.5 with the host held 16
# calls ahead from Python.
#   1. many_keys.py on the legacy stream, checked against torch's f32
#      reference: 1, 32, 80 sets and 32 layers x 3 token counts; the bound at
#      4 and 64 at 80 sets; eager and torch's own stream beside; no bound
#      (0); malformed bounds (each must fail naming it).
#   2. The C++ apps (shared_gpu_build.sh with this runtime) at world size 2
#      with both ranks on one GPU, on the legacy stream and on the runtime's:
#      llama_mlp and llama_decoder at 1-129 tokens, the partitions app.
#   (here)   bench/device/oproj_split_build.sh target/s27 with this runtime in target/s27/layers,
#            bench/device/shared_gpu_build.sh target/g27; tar -cJf target/p27.tar.xz -C target s27 g27
#   (device) tar -xJf target/p27.tar.xz -C target && bash bench/device/legacy_pacer_h200.sh target/s27 target/g27
set -uo pipefail
B=${1:?usage: legacy_pacer_h200.sh LAYERS_BUILD APPS_BUILD}
G=${2:?usage: legacy_pacer_h200.sh LAYERS_BUILD APPS_BUILD}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
keys() { # layers tokens [many_keys.py options]
  local layers=$1 tokens=$2
  shift 2
  echo "== layers=$layers tokens=$tokens SYMM_CUDA_GRAPHS=${SYMM_CUDA_GRAPHS:-1} SYMM_LEGACY_GRAPHS_AHEAD=${SYMM_LEGACY_GRAPHS_AHEAD:-} $*"
  SYMM_LOG=warn SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so \
    PYTHONPATH=python:bench/model run timeout 200 "$B/symm-launch" -n 1 python3 bench/model/many_keys.py \
    "$B/layers/libmlp_4096x7168.so" 4096 7168 --layers "$layers" --tokens "$tokens" --steps 10 "$@"
}
{
  for shape in "1 16" "32 16" "80 16" "32 1,16,17"; do
    keys ${shape% *} ${shape#* } --check
  done
  for ahead in 4 64; do
    SYMM_LEGACY_GRAPHS_AHEAD=$ahead keys 80 16 --check
  done
  SYMM_CUDA_GRAPHS=0 keys 80 16
  SYMM_CUDA_GRAPHS=0 keys 32 1,16,17
  keys 80 16 --stream --check
  SYMM_LEGACY_GRAPHS_AHEAD=0 keys 80 16 --check
  # Malformed bounds: each call must fail naming the variable (2 non-zero exits).
  for bad in many 2000; do
    SYMM_LEGACY_GRAPHS_AHEAD=$bad keys 2 16
  done
} 2>&1 | grep -v Warning | tee "$OUT/pacer_many_keys.log"
{
  export SYMM_TIMEOUT_S=20
  launch2() { timeout 200 "$G/symm-launch" -n 2 --gpus 1 "$@"; }
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 17 33 128 129 --partitioned
  for stream in legacy runtime; do
    for layer in llama_mlp llama_decoder; do
      run launch2 "$G/w2/$layer" /tmp/ref --tokens=1,16,17,33,128,129 --iterations=3 --stream=$stream
    done
  done
  run launch2 "$G/w2/partitioned" /tmp/ref --iterations=1
  [[ -x $G/symm-gpu-tests ]] && run timeout 200 "$G/symm-launch" -n 2 --gpus 1 "$G/symm-gpu-tests"
} 2>&1 | tee "$OUT/pacer_apps.log"
tally apps "$OUT/pacer_apps.log"
tally many_keys "$OUT/pacer_many_keys.log"
