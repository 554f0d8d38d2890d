#!/usr/bin/env bash
# Session 24, 2x H200 (TP 2): issue 32's targets with the committed build,
# beside torch.compile (Inductor) + CUDA graphs: the floor, the MLP block
# (two rounds) and the decoder half-layer (with the rows kernels' Lamport
# bound at 256 KiB, the build before, in the same process) at 1, 16 and
# 128 tokens; then the kernels per call of both (layer_profile.py); then
# racecheck on our kernels of the decoder and attention-output apps at
# 96-129 rows with the ranks on GPU 0.
#   (here)   build_layer.sh examples/llama_{mlp,decoder}.mlir target/f24/layers, the decoder again as
#            LAYER_NAME=llama_decoder_rl256 SYMM_COMPILE_FLAGS=--rows-lamport-max-bytes=262144,
#            symm-launch; bench/device/shared_gpu_build.sh target/g24; tar both
#   (device) for t in f24 g24; do tar -xJf target/$t.tar.xz -C target; done &&
#            bash bench/device/session24_x2.sh target/f24 target/g24
set -uo pipefail
B=${1:?usage: session24_x2.sh BUILD_DIR APPS_DIR}
G=${2:?usage: session24_x2.sh BUILD_DIR APPS_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
floor_read 2>&1 | tee "$OUT/floor.log"
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export TORCH_VARIANTS=one_shot,two_shot LAYER_TOKENS=1,16,128
for round in 1 2; do
  run timeout 280 torchrun --nproc_per_node=2 bench/model/layer_bench.py "$L/libllama_mlp.so" \
    2>&1 | grep -v Warning | tee "$OUT/layer_bench_$round.log"
done
run timeout 280 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$L/libllama_decoder.so" \
  rl256="$L/libllama_decoder_rl256.so" 2>&1 | grep -v Warning | tee "$OUT/decoder_bench.log"
for block in mlp decoder; do
  lib=$L/libllama_mlp.so
  [[ $block == decoder ]] && lib=$L/libllama_decoder.so
  PROFILE_BLOCK=$block PROFILE_TOKENS=1,16,128 run timeout 280 \
    torchrun --nproc_per_node=2 bench/model/layer_profile.py "$lib" 2>&1 | grep -v Warning \
    | tee "$OUT/profile_$block.log"
done
{
  run python3 bench/model/reference.py --out /tmp/ref --m 96 128 129 --partitioned
  for layer in llama_decoder llama_attn_out; do
    run timeout 280 "$G/symm-launch" -n 2 --gpus 1 compute-sanitizer --tool racecheck \
      --kernel-name kns=symm_ --error-exitcode 9 "$G/w2/$layer" /tmp/ref --tokens=96,128,129 --iterations=1
  done
} 2>&1 | tee "$OUT/racecheck.log"
for log in "$OUT"/layer_bench_*.log "$OUT/decoder_bench.log"; do
  bench_columns "$(basename "$log" .log)" "$log" symm_us symm_rl256_us symm_cg_us torch_compile_best_us
done
tally racecheck "$OUT/racecheck.log"
