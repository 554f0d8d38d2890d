#!/usr/bin/env bash
# Session 28, 2x H200 (TP 2): the decoder half-layer's measured choices and
# times with the runtime before the stream gate (B/old: f3b78ef) and with
# it, processes taking turns. Sessions 26-27 saw the decoder's o_proj at 16
# rows take the generated GEMV in some processes (cuBLAS timed 10-19 µs,
# its kernel 7.1-7.8) and the decoder run 2-3 µs slower in them; on one
# H200 the gate made that choice the same in every process
# (stream_gate_h200.sh). Each process: decoder_bench.py at 1 and 16 rows,
# 3 weight copies, beside torch's variants and torch.compile, the choices
# logged (SYMM_LOG=info); then the MLP block once with the gated runtime.
#   (here)   see stream_gate_h200.sh; tar -cJf target/s28.tar.xz -C target s28
#   (device) tar -xJf target/s28.tar.xz -C target && bash bench/device/stream_gate_x2.sh target/s28
set -uo pipefail
B=${1:?usage: stream_gate_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
floor_read 2>&1 | tee "$OUT/floor.log"
export PYTHONPATH=python:bench/model SYMM_LOG=info
export TORCH_VARIANTS=two_shot LAYER_TOKENS=1,16 LAYER_WEIGHT_COPIES=3
for process in 1 2; do
  for rt in old new; do
    L=$B/layers
    [[ $rt == old ]] && L=$B/old/layers
    log=$OUT/decoder_${rt}_$process.log
    SYMM_RUNTIME_LIB=$L/libsymm_runtime.so run timeout 200 torchrun --nproc_per_node=2 \
      bench/model/decoder_bench.py "$L/libllama_decoder.so" 2>&1 | grep -v Warning > "$log"
    grep -E "rank 0.*matmul site" "$log" | sed "s/^/$rt $process: /"
    bench_columns "$rt $process" "$log" symm_us symm_cg_us torch_compile_best_us
  done
done 2>&1 | tee "$OUT/summary.log"
SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so run timeout 200 torchrun --nproc_per_node=2 \
  bench/model/layer_bench.py "$B/layers/libllama_mlp.so" 2>&1 | grep -v Warning > "$OUT/mlp_new.log"
bench_columns "mlp new" "$OUT/mlp_new.log" symm_us symm_cg_us torch_compile_best_us | tee -a "$OUT/summary.log"
# The GPU tests on the two GPUs, the stream gate's among them.
run timeout 200 "$B/symm-launch" -n 2 "$B/symm-gpu-tests" 2>&1 | tee "$OUT/gpu_tests.log"
tally gpu_tests "$OUT/gpu_tests.log"
