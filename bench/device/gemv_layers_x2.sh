#!/usr/bin/env bash
# Issue 32 on 2 GPUs in one device call, with the one-row GEMV: the
# weight-read floor (bench/floor), the Llama MLP block and decoder half-layer
# against torch.compile + CUDA graphs (matmul_layers_x2.sh), the per-kernel
# profile at decode sizes (layer_profile.py), the MLP block at four widths
# against torch's f32 reference with the generated kernels forced
# (matmul_check.py, GPU 0), and compute-sanitizer on the generated kernels
# (gemv_sanitizer.sh, GPU 0).
#
#   (here)   python/build_layer.sh examples/llama_mlp.mlir target/x2/layers
#            python/build_layer.sh examples/llama_decoder.mlir target/x2/layers
#            bench/device/gemv_build.sh target/gv   (then drop its apps)
#   (device) bash bench/device/gemv_layers_x2.sh target/x2 target/gv   (kind nvidia-h200-x2)
set -uo pipefail
B=${1:?usage: gemv_layers_x2.sh BUILD_DIR GEMV_BUILD_DIR}
G=${2:?usage: gemv_layers_x2.sh BUILD_DIR GEMV_BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stream_read bench/floor/stream_read.cu
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  # Registers and spills of the generated matmul kernels (if the layer
  # embeds machine code; PTX-only modules list nothing).
  cuobjdump -res-usage "$B/layers/libllama_mlp.so" 2>&1 | grep -A1 'symm_matmul' | head -20
  CUDA_VISIBLE_DEVICES=0 run timeout 200 /tmp/stream_read 176160768 117440512 58720256
} 2>&1 | tee "$OUT/floor.log"
OUT=$OUT bash "$(dirname "$0")/matmul_layers_x2.sh" "$B"
SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model PROFILE_TOKENS=1,4,16 \
  run timeout 200 torchrun --nproc_per_node=2 bench/model/layer_profile.py "$B/layers/libllama_mlp.so" \
  2>&1 | tee "$OUT/layer_profile.log"
{
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    SYMM_MATMUL=generated CUDA_VISIBLE_DEVICES=0 SYMM_RUNTIME_LIB=$G/layers/libsymm_runtime.so \
      PYTHONPATH=python:bench/model run timeout 200 "$G/symm-launch" -n 1 python3 \
      bench/model/matmul_check.py "$G/layers/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,3,4,5,16
  done
} 2>&1 | tee "$OUT/checks.log"
CUDA_VISIBLE_DEVICES=0 bash "$(dirname "$0")/gemv_sanitizer.sh" "$G" > "$OUT/sanitizer.log" 2>&1
