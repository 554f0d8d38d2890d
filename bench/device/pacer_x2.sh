#!/usr/bin/env bash
# Session 27, 2x H200 (TP 2): issue 32's layer benches (3 weight copies,
# torch's one-shot and two-shot variants and torch.compile beside) with this
# session's runtime, its legacy-stream replay pacing on (the default, 4
# replays ahead) and off (SYMM_LEGACY_GRAPHS_AHEAD=0), one after the other;
# then at world size 1 on GPU 0 many_keys.py at 80 argument sets paced and
# not, and a malformed bound (the call must fail naming it).
#   (here)   oproj_split_build.sh target/s27, this runtime into target/s27/layers,
#            python/build_layer.sh examples/llama_mlp.mlir target/s27/layers; tar -cJf target/s27.tar.xz -C target s27
#   (device) tar -xJf target/s27.tar.xz -C target && bash bench/device/pacer_x2.sh target/s27
set -uo pipefail
B=${1:?usage: pacer_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
floor_read 2>&1 | tee "$OUT/floor.log"
(
  export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
  export TORCH_VARIANTS=one_shot,two_shot LAYER_TOKENS=1,16,128 LAYER_WEIGHT_COPIES=3
  for ahead in 4 0; do
    SYMM_LEGACY_GRAPHS_AHEAD=$ahead run timeout 170 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
      "$L/libllama_mlp.so" 2>&1 | grep -v Warning | tee "$OUT/layer_bench_ahead$ahead.log"
    SYMM_LEGACY_GRAPHS_AHEAD=$ahead run timeout 170 torchrun --nproc_per_node=2 bench/model/decoder_bench.py \
      "$L/libllama_decoder.so" 2>&1 | grep -v Warning | tee "$OUT/decoder_bench_ahead$ahead.log"
  done
  for log in "$OUT"/layer_bench_ahead*.log "$OUT"/decoder_bench_ahead*.log; do
    bench_columns "$(basename "$log" .log)" "$log" symm_us symm_prepared_us symm_cg_us torch_compile_best_us
  done
)
keys() {
  echo "== layers=80 SYMM_LEGACY_GRAPHS_AHEAD=${SYMM_LEGACY_GRAPHS_AHEAD:-}"
  CUDA_VISIBLE_DEVICES=0 SYMM_LOG=warn SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    run timeout 200 "$B/symm-launch" -n 1 python3 bench/model/many_keys.py "$L/libmlp_4096x7168.so" 4096 7168 \
    --layers "${1:-80}" --tokens 16 --steps 10 --check
}
{
  keys
  SYMM_LEGACY_GRAPHS_AHEAD=0 keys
  SYMM_LEGACY_GRAPHS_AHEAD=many keys 2
} 2>&1 | grep -v Warning | tee "$OUT/many_keys.log"
