#!/usr/bin/env bash
# Issue 32, session 19 (kind nvidia-h200-x4): why the TP-4 MLP block at
# 128-256 tokens trails torch.compile. Its profile (layer_profile.py) has
# our two-shot, pushing into the peers' inputs, at 17.4 / 22.1 us against
# torch's in-place two-shot at 13.9 / 18.5. Here:
#  1. the runtime's all-reduce kernels (symm-allreduce-bench: the pull
#     two-shot, out of place and in place) beside torch's anchor, 4 ranks;
#  2. the TP-4 MLP block as built (push) against the same program whose
#     two-shots pull (llama_mlp_pull: built by a compiler patched to leave
#     `push` unset on the two-shot, with SYMM_EXPERIMENT_PULL=1; the patch
#     is one line in segments.rs' AllReduceFacts::kernel and is not kept),
#     beside torch.compile, two rounds.
#   (device) bash bench/device/tp4_two_shot_x4.sh   (carry target/tp4)
set -uo pipefail
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
T=target/tp4
L=$T/layers
nvidia_libraries
export SYMM_BENCH_NUMELS=${SYMM_BENCH_NUMELS:-262144,524288,1048576,2097152}
run timeout 120 $T/symm-launch -n 4 $T/symm-allreduce-bench 2>&1 | sed 's/^\[rank 0\] //' > "$OUT/symm_allreduce_x4.jsonl"
run timeout 120 torchrun --nproc_per_node=4 $T/anchors/torch_allreduce_bench.py 2>/dev/null > "$OUT/torch_allreduce_x4.jsonl"
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_TOKENS=${LAYER_TOKENS:-96,128,256,512}
for round in 1 2; do
  run timeout 200 torchrun --nproc_per_node=4 bench/model/layer_bench.py $L/libllama_mlp.so \
    pull=$L/libllama_mlp_pull.so > "$OUT/mlp_tp4_pull_$round.log" 2>&1
  bench_columns "mlp round $round" "$OUT/mlp_tp4_pull_$round.log" symm_us symm_cg_us symm_pull_us \
    symm_pull_cg_us torch_compile_best_us
done
