#!/usr/bin/env bash
# Issue 32, session 35, 2x H200: does the order of a layer bench's variants
# move its figures at compute-bound sizes? layer_bench.py with ours timed
# after torch's variants (torch_first, the default) and before them
# (symm_first), twice each, at LLaMA-30B's block at 384 tokens and
# Llama-3-70B's at 256, with nvidia-smi sampling the SM clock, the power and
# the clock-event reasons every 100 ms (smi.log). Build: lamport_2m_x2.sh's
# (with LAMPORT_MAX 4 MiB), into target/w4.
#   (device) bash bench/device/order_x2.sh [BUILD]
set -uo pipefail
B=${1:-target/w4}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
nvidia-smi --query-gpu=index,timestamp,clocks.sm,power.draw,clocks_event_reasons.active --format=csv -lms 100 > "$OUT/smi.log" &
smi=$!
for order in torch_first symm_first torch_first symm_first; do
  for w in "6656,17920,6656x8960,384" "8192,28672,8192x14336,256"; do
    IFS=, read -r d f lib m <<< "$w"
    echo "== $order $lib M=$m $(date +%T.%N)"
    LAYER_ORDER=$order LAYER_WIDTHS=$d,$f LAYER_TOKENS=$m LAYER_WEIGHT_COPIES=3 TORCH_VARIANTS=two_shot \
      SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model timeout 200 \
      torchrun --nproc_per_node=2 bench/model/layer_bench.py "$L/libmlp_tp2_$lib.so" > /tmp/order.log 2>&1
    bench_columns "$order $lib" /tmp/order.log symm_us symm_prepared_us symm_cg_us \
      torch_two_shot_gateup_cg_us torch_compile_two_shot_cg_us torch_compile_best_us
  done
done 2>&1 | tee "$OUT/order.log"
kill $smi
