#!/usr/bin/env bash
# What sessions 13 to 15 wrote without two GPUs (no x2 was lent), for the
# next device calls on 2x H200:
# 1. row reductions read a 16-byte vector at a time (dcbd1fc: the fused
#    RMSNorm; 25ba1b1: softmax's and LayerNorm's statistics): the checks
#    (the Llama layers against torch's f32 references, in graphs and not;
#    softmax and LayerNorm rows against the host; the runtime GPU tests),
#    then the MLP block beside torch's variants with the layer built before
#    the change (label before), twice, and the profile (kernels per call);
# 2. issue 13's library against compiled all-reduce under one harness
#    (bench/compiled/allreduce_bench.cpp now times both), beside torch's
#    anchor, twice;
# 3. (the split-K probe ran on one GPU in session 15: a sweep over K,
#    bench/results/2026-11-23-split-k-rows-h200.md);
# 4. session 14's symm-mem-split-k in the two-GPU block: the layer_bench
#    rounds also time it built with --split-k-max-rows=0 (label nosplit),
#    and the checks run it at 64/65 and 128/129 tokens (dispatch edges);
# 5. session 15's examples/llama_decoder.mlir (o_proj + all-reduce +
#    residual + RMSNorm, the MLP, all-reduce + residual + the next RMSNorm,
#    the down projection split over K into a rows kernel) checked on 2 GPUs
#    and timed beside torch's variants of the same block
#    (bench/model/decoder_bench.py), with and without the split.
# (Session 16 ran the correctness half of 1, 4 and 5 with 2, 4 and 8 ranks
# sharing one GPU, bench/device/shared_gpu_checks.sh: all PASS. What is
# left for two GPUs is the timing, and the checks again on real links.)
#
#   bench/model/build_apps.sh target/lN   (prune: keep llama_mlp,
#     llama_attn_out, llama_decoder, row_ops, symm-launch, symm-gpu-tests)
#   python/build_layer.sh examples/llama_mlp.mlir target/lN/py
#   git worktree add /tmp/before 60a56d1 && (cd /tmp/before && cargo build
#     --release -p symm-compile) && LAYER_NAME=llama_mlp_before \
#     python/build_layer.sh examples/llama_mlp.mlir target/lN/py /tmp/before/target/release
#     (then copy this tree's libsymm_runtime.so back over the py folder's)
#   LAYER_NAME=llama_mlp_nosplit SYMM_COMPILE_FLAGS=--split-k-max-rows=0 \
#     python/build_layer.sh examples/llama_mlp.mlir target/lN/py
#   python/build_layer.sh examples/llama_decoder.mlir target/lN/py
#   LAYER_NAME=llama_decoder_nosplit SYMM_COMPILE_FLAGS=--split-k-max-rows=0 \
#     python/build_layer.sh examples/llama_decoder.mlir target/lN/py
#   python3 bench/compiled/gen_allreduce.py > target/lN/ar/allreduce.mlir;
#     symm-compile it -o target/lN/ar/ar.o; link allreduce_bench.cpp
#     -DALGORITHM=auto as target/lN/compiled_ar (bench/compiled/README);
#     cp -r ../shared/anchors target/lN/
#   (all of the above but the before layer, in one step:
#    bench/device/pending_build_h200x2.sh target/lN)
#   (device) bash bench/device/pending_h200x2.sh target/lN "checks mlp", then
#            bash bench/device/pending_h200x2.sh target/lN "decoder allreduce"
set -uo pipefail
B=${1:?usage: pending_h200x2.sh BUILD_DIR [SECTIONS]}
# All of it runs past one device call's 10 minutes: run it as two,
#   pending_h200x2.sh target/lN "checks mlp"  and  ... "decoder allreduce"
sections=" ${2:-checks mlp decoder allreduce} "
want() { [[ $sections == *" $1 "* ]]; }
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=10 NVSHMEM_DISABLE_NVLS=1
py=$PWD/$B/py
export SYMM_RUNTIME_LIB=$py/libsymm_runtime.so PYTHONPATH=python:bench/model
if want checks; then
  {
    date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    tokens=1,16,64,65,128,129,256,2048
    run python3 bench/model/reference.py --out /tmp/ref --m 1 16 32 33 64 65 128 129 256 2048
    run timeout 120 "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
    SYMM_CUDA_GRAPHS=0 run timeout 120 "$B/symm-launch" -n 2 "$B/llama_mlp" /tmp/ref --tokens=$tokens
    run timeout 120 "$B/symm-launch" -n 2 "$B/llama_attn_out" /tmp/ref --tokens=$tokens
    run timeout 200 "$B/symm-launch" -n 2 "$B/llama_decoder" /tmp/ref \
      --tokens=1,16,32,33,64,65,128,129,2048
    SYMM_CUDA_GRAPHS=0 run timeout 200 "$B/symm-launch" -n 2 "$B/llama_decoder" /tmp/ref \
      --tokens=1,33,129
    run timeout 120 "$B/symm-launch" -n 1 "$B/row_ops"
    run timeout 300 "$B/symm-launch" -n 2 "$B/symm-gpu-tests"
  } 2>&1 | tee "$OUT/checks.log"
fi
if want mlp; then
  # The session-13 layer, if it was built (by hand; see above).
  before=()
  [ -f "$py/libllama_mlp_before.so" ] && before=("before=$py/libllama_mlp_before.so")
  for round in 1 2; do
    LAYER_TOKENS=1,16,128,2048 timeout 300 torchrun --nproc_per_node=2 bench/model/layer_bench.py \
      "$py/libllama_mlp.so" "${before[@]}" "nosplit=$py/libllama_mlp_nosplit.so" 2>&1 \
      | grep -v Warning
  done | tee "$OUT/layer_bench.jsonl"
  timeout 200 torchrun --nproc_per_node=2 bench/model/layer_profile.py "$py/libllama_mlp.so" 2>&1 \
    | grep -v Warning | tee "$OUT/layer_profile.log"
  python3 bench/model/plot_layer.py "$OUT/layer_bench.jsonl" "$OUT/layer_bench.png" \
    "Llama-3-8B TP 2 MLP block, 2x H200" || echo "no plot (matplotlib?): plot it here"
fi
if want decoder; then
  for round in 1 2; do
    # 1024: where the measured matmul pair (session 15) takes two GEMMs at TP 2.
    LAYER_TOKENS=1,16,128,1024,2048 timeout 300 torchrun --nproc_per_node=2 bench/model/decoder_bench.py \
      "$py/libllama_decoder.so" "nosplit=$py/libllama_decoder_nosplit.so" 2>&1 | grep -v Warning
  done | tee "$OUT/decoder_bench.jsonl"
  python3 bench/model/plot_layer.py "$OUT/decoder_bench.jsonl" "$OUT/decoder_bench.png" \
    "Llama-3-8B TP 2 decoder half-layer, 2x H200" || echo "no plot (matplotlib?): plot it here"
fi
if want allreduce; then
  for round in 1 2; do
    timeout 200 "$B/symm-launch" -n 2 "$B/compiled_ar" 2>&1 | sed -n 's/^\[rank 0\] /compiled /p'
    timeout 120 torchrun --nproc_per_node=2 "$B/anchors/torch_allreduce_bench.py" 2>/dev/null \
      | sed "s/^/torch /"
  done | tee "$OUT/allreduce.jsonl"
fi
