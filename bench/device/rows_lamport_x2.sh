#!/usr/bin/env bash
# The decoder half-layer's rows kernels (all-reduce + residual + next RMSNorm)
# at 33-128 rows (256 KiB - 1 MiB of 4096-wide bf16 rows), 2 ranks: the
# default (Lamport up to 256 KiB, staged up to 512 KiB, the barrier one-shot
# to 1 MiB) against the Lamport rows kernel up to 512 KiB and 1 MiB
# (--rows-lamport-max-bytes) and the two-shot rows kernel from 512 KiB
# (--one-shot-max-bytes=524288), in one decoder_bench.py process beside
# torch.compile's two-shot, two rounds.
#   (here)   python/build_layer.sh examples/llama_decoder.mlir target/rl/layers, then with
#            LAYER_NAME=llama_decoder_<v> SYMM_COMPILE_FLAGS=<flags> for each variant
#   (device) tar -xJf target/rl.tar.xz -C target && bash bench/device/rows_lamport_x2.sh target/rl
set -uo pipefail
B=${1:?usage: rows_lamport_x2.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
for round in 1 2; do
  TORCH_VARIANTS=two_shot LAYER_TOKENS=${LAYER_TOKENS:-16,33,64,96,128} run timeout 280 \
    torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$L/libllama_decoder.so" \
    rl1m="$L/libllama_decoder_rl1m.so" rl512="$L/libllama_decoder_rl512.so" \
    os512="$L/libllama_decoder_os512.so" 2>&1 | grep -v Warning | tee "$OUT/decoder_$round.log"
done
for round in 1 2; do
  bench_columns "round $round" "$OUT/decoder_$round.log" symm_us symm_rl1m_us symm_rl512_us \
    symm_os512_us symm_cg_us symm_rl1m_cg_us symm_os512_cg_us torch_compile_best_us
done
