#!/usr/bin/env bash
# Issue 32's misses with the profile that explains them (2x H200, TP 2): the
# floor read, then kernels per call of the MLP block and the decoder
# half-layer at 1, 16 and 128 tokens beside torch's two-shot and
# torch.compile (Inductor) in CUDA graphs (layer_profile.py); then, on GPU 0
# at world size 1, each generated matmul alone against cuBLAS on the same
# shape (programmatic launch off, so a kernel's span is its own work), and
# the measured choice's own timings (SYMM_LOG=info).
#   (here)   WIDTHS=4096x7168 bench/device/matmul_build.sh target/p24 && for p in examples/llama_mlp.mlir \
#              examples/llama_decoder.mlir; do python/build_layer.sh $p target/p24/layers; done
#              && (cd target && tar -cJf p24.tar.xz p24)
#   (device) tar -xJf target/p24.tar.xz -C target && bash bench/device/profile_x2.sh target/p24
set -uo pipefail
B=${1:?usage: profile_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
floor_read 2>&1 | tee "$OUT/floor.log"
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
for block in mlp decoder; do
  lib=$L/libllama_mlp.so
  [[ $block == decoder ]] && lib=$L/libllama_decoder.so
  PROFILE_BLOCK=$block PROFILE_TOKENS=${PROFILE_TOKENS:-1,16,128} run timeout 280 \
    torchrun --nproc_per_node=2 bench/model/layer_profile.py "$lib" 2>&1 | grep -v Warning \
    | tee "$OUT/profile_$block.log"
done
for way in generated library; do
  echo "== alone: SYMM_MATMUL=$way SYMM_PDL=0"
  CUDA_VISIBLE_DEVICES=0 SYMM_MATMUL=$way SYMM_PDL=0 run py "$L/libmlp_4096x7168.so" 4096 7168 \
    --tokens 16 --profile 1,16 2>&1 | tee -a "$OUT/alone.log"
done
echo "== the measured choice's timings"
CUDA_VISIBLE_DEVICES=0 SYMM_LOG=info run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,16 \
  2>&1 | tee "$OUT/choice.log"
