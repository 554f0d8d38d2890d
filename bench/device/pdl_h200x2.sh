#!/usr/bin/env bash
# Programmatic dependent launch on 2x H200, one device call: the Llama
# layers against torch's f32 references with PDL (the default) and without
# (SYMM_PDL=0), tp_mlp and the runtime GPU tests, then the MLP block beside
# torch's variants with and without PDL (alternating, two rounds each), and
# layer_profile.py with PDL.
#
#   bench/model/build_apps.sh target/l21   (then prune to the apps below)
#   python/build_layer.sh examples/llama_mlp.mlir target/l21/py
#   (device) bash bench/device/pdl_h200x2.sh target/l21
set -uo pipefail
B=${1:?usage: pdl_h200x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=10 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$(python3 -c "import nvidia, glob, os; print(':'.join(glob.glob(os.path.join(nvidia.__path__[0], '*', 'lib'))))" 2>/dev/null)
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  tokens=1,16,128,256,2048
  run python3 bench/model/reference.py --out /tmp/ref --m 1 16 128 256 2048
  run timeout 120 "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
  SYMM_CUDA_GRAPHS=0 run timeout 120 "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
  SYMM_PDL=0 run timeout 120 "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
  run timeout 120 "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=$tokens
  run timeout 60 "$B/symm-launch" -n 2 "$B/tp_mlp"
  run timeout 120 "$B/symm-launch" -n 2 "$B/symm-gpu-tests"
} 2>&1 | tee "$OUT/checks.log"
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
for round in 1 2; do
  for pdl in 1 0; do
    SYMM_PDL=$pdl LAYER_TOKENS=1,16,128,2048 timeout 200 torchrun --nproc_per_node=2 \
      bench/model/layer_bench.py "$py/libllama_mlp.so" 2>&1 | grep "^{" | sed "s/^{/{\"pdl\": $pdl, /"
  done
done | tee "$OUT/layer_bench.jsonl"
timeout 200 torchrun --nproc_per_node=2 bench/model/layer_profile.py "$py/libllama_mlp.so" 2>&1 \
  | grep -v Warning | tee "$OUT/layer_profile.log"
