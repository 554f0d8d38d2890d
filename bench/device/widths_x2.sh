#!/usr/bin/env bash
# Issue 32, session 34, 2x H200 (TP 2): the MLP block of other models, not
# only Llama-3-8B, against torch.compile (Inductor) + CUDA graphs in the same
# processes, 3 weight copies, with the weight-read floor of each width's
# bytes and the measured choice of each matmul site (SYMM_LOG=info, rank 0).
# WIDTHS holds "D,F" pairs (hidden size, whole MLP width; a rank holds F/2):
#   4096,14336  Llama-3-8B          3584,18944  Qwen2.5-7B (hidden not a power of two)
#   5120,13824  Llama-2-13B         5120,27648  Qwen2.5-32B (down K = 13824)
#   6656,17920  LLaMA-30B (hidden 6656: the pair streams its norm, the L1 rule)
#   8192,28672  Llama-3-70B
#   (here)   TP_WORLDS=2 WIDTHS="4096x7168 3584x9472 5120x6912 5120x13824 6656x8960 8192x14336" \
#              LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/wx
#   (device) WIDTHS="4096,14336 3584,18944" bash bench/device/widths_x2.sh target/wx
# VARIANTS ("s3 ...") also times, in the same processes, each build
# $L/libmlp_tp2_<D>x<F/2>_<variant>.so that exists (say, compiled with
# --split-k-slices 3), as the bench's symm_<variant> columns.
# ALGO_POLICIES ("default measured") runs each width once per value of
# SYMM_GEMM_ALGO (cuBLAS's default kernels, or each GEMM's measured among
# cuBLASLt's list: runtime/src/gemm_algos.rs), each a process with its own
# torch.compile anchor; unset, the runtime's default (measured).
# Logs in $OUT: summary.log (one line per width and token count), widths.log.
set -uo pipefail
B=${1:?usage: widths_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_WEIGHT_COPIES=3 TORCH_VARIANTS=two_shot LAYER_TOKENS=${LAYER_TOKENS:-1,16,128}
for w in ${WIDTHS:?WIDTHS: \"D,F ...\"}; do
  d=${w%,*} f=${w#*,}
  rank_f=$((f / 2))
  bytes=$((3 * d * rank_f * 2))
  # The floor of the width's bytes, once for all its policies.
  floor_read $bytes $((2 * d * rank_f * 2)) $((d * rank_f * 2)) > /tmp/floor.log 2>&1
  for policy in ${ALGO_POLICIES:-measured}; do
    label=$d,$f
    [[ -n ${ALGO_POLICIES:-} ]] && label=$d,$f,$policy
    {
      echo "### D=$d F=$f (a rank: $d x $rank_f, $((bytes / 1000000)) MB of weights) SYMM_GEMM_ALGO=$policy"
      cat /tmp/floor.log
      extra=() columns=()
      for v in ${VARIANTS:-}; do
        so=$L/libmlp_tp2_${d}x${rank_f}_$v.so
        [[ -f $so ]] && extra+=("$v=$so") columns+=("symm_${v}_us")
      done
      SYMM_GEMM_ALGO=$policy LAYER_WIDTHS=$w SYMM_LOG=info run timeout 280 torchrun --nproc_per_node=2 \
        bench/model/layer_bench.py "$L/libmlp_tp2_${d}x${rank_f}.so" "${extra[@]}" 2>&1 |
        grep -v -e Warning -e "symmetric buffer"
    } > /tmp/width.log 2>&1
    cat /tmp/width.log >> "$OUT/widths.log"
    {
      grep FLOOR-BEST /tmp/width.log | sed "s/^/$label /"
      grep -o "matmul site.*" /tmp/width.log | sort -u | sed "s/^/$label /"
      bench_columns "$label" /tmp/width.log symm_us "${columns[@]}" symm_cg_us torch_compile_best_us
    } | tee -a "$OUT/summary.log"
  done
done
