#!/usr/bin/env bash
# Issue 32, session 33, 2x H200 (TP 2): our kernels without dynamic shared
# memory (the all-reduce, rows and element-wise kernels) launched
# programmatically after cuBLAS's kernels too (SYMM_PDL_AFTER_LIBRARY=1),
# against the ordinary launch there (0, the default), in alternating
# processes beside torch.compile (Inductor) in CUDA graphs, 3 weight copies.
# At 128 rows the MLP block runs cuBLAS gate+up, our SiLU·up, cuBLAS down,
# our Lamport all-reduce: two launches after cuBLAS a call.
#   (here)   bench/device/hopper_build.sh target/pl (then drop what PARTS do not run)
#   (device) PARTS="bench" bash bench/device/pdl_after_library_x2.sh target/pl
#            PARTS="decoder prefill apps" bash bench/device/pdl_after_library_x2.sh target/pl
set -uo pipefail
B=${1:?usage: pdl_after_library_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
ALL_PARTS="bench decoder prefill apps"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_WEIGHT_COPIES=3 TORCH_VARIANTS=${TORCH_VARIANTS:-two_shot}
layer() { # LOG-NAME PDL TOKENS BENCH LIB
  SYMM_PDL_AFTER_LIBRARY=$2 LAYER_TOKENS=$3 run timeout 200 torchrun --nproc_per_node=2 \
    "bench/model/$4_bench.py" "$5" 2>&1 | grep -v -e Warning -e "symmetric buffer" > "$OUT/$1.log"
  bench_columns "$1" "$OUT/$1.log" symm_us symm_cg_us torch_compile_best_us
}
if part bench; then
  [[ ${FLOOR:-1} == 1 ]] && floor_read 2>&1 | tee "$OUT/floor.log"
  for round in 1 2; do
    for pdl in 0 1; do
      layer "mlp_pdl${pdl}_$round" $pdl 16,128 layer "$L/libllama_mlp.so"
    done
  done 2>&1 | tee "$OUT/summary.log"
  for pdl in 0 1; do
    layer "decoder_pdl$pdl" $pdl 128 decoder "$L/libllama_decoder.so"
  done 2>&1 | tee -a "$OUT/summary.log"
fi
# More rounds of the decoder at 128 rows (its rows kernels follow cuBLAS's
# o_proj and down projection), the modes in turn.
if part decoder; then
  for round in 2 3; do
    for pdl in 1 0; do
      layer "decoder_pdl${pdl}_$round" $pdl 128 decoder "$L/libllama_decoder.so"
    done
  done 2>&1 | tee -a "$OUT/summary.log"
fi
if part prefill; then
  for pdl in 0 1; do
    layer "mlp2048_pdl$pdl" $pdl 2048 layer "$L/libllama_mlp.so"
  done 2>&1 | tee -a "$OUT/summary.log"
fi
# The C++ apps on the two GPUs with the new launches, 1-2048 tokens, each
# output against torch's f32 reference and the asynchronous chains against
# synchronizing calls.
if part apps; then
  run python3 bench/model/reference.py --out /tmp/ref --m 1 9 16 17 128 2048 > /dev/null
  for app in llama_mlp_w2 llama_decoder_w2; do
    SYMM_PDL_AFTER_LIBRARY=1 run timeout 200 "$B/symm-launch" -n 2 "$B/$app" /tmp/ref \
      --tokens=1,9,16,17,128,2048 --iterations=5
  done 2>&1 | grep -v Warning | tee "$OUT/apps.log"
  tally apps "$OUT/apps.log"
fi
