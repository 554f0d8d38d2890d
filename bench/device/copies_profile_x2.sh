#!/usr/bin/env bash
# Session 26, 2x H200 (TP 2): where the time goes when the benches' calls
# take 3 weight copies in turn instead of the same weights. In
# session26_x2.sh ours slowed by 0.9-2.1 µs (MLP) and 1.5-3.7 µs (decoder)
# with copies, torch.compile's by at most 1.1 µs either way. Kernels per
# call (layer_profile.py, rank 0) of both blocks at 1 and 16 tokens, with 1
# and 3 copies, ours beside torch.compile's two-shot variant.
#   (device) tar -xJf target/s26.tar.xz -C target && bash bench/device/copies_profile_x2.sh target/s26
set -uo pipefail
B=${1:?usage: copies_profile_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
for block in decoder mlp; do
  lib=$L/libllama_mlp.so
  [[ $block == decoder ]] && lib=$L/libllama_decoder.so
  for copies in 1 3; do
    LAYER_WEIGHT_COPIES=$copies PROFILE_BLOCK=$block PROFILE_TOKENS=1,16 run timeout 140 \
      torchrun --nproc_per_node=2 bench/model/layer_profile.py "$lib" 2>&1 \
      | grep -v "Warning\|warn_once\|return func" | tee "$OUT/profile_${block}_c$copies.log"
  done
done
