#!/usr/bin/env bash
# Issue 32, session 35, 2x H200: the decoder half-layer's rows kernels (the
# all-reduce with the residual and the next RMSNorm) as the Lamport one-shot
# up to 2 MiB (--rows-lamport-max-bytes=4194304: up to 4 MiB and a block a
# row, which the 2 MiB rows two-shot bound cuts at 2 MiB) against the
# default (Lamport up to 1 MiB, the two-shot to 2 MiB), as
# libdec_tp2_<DxAxF>_r4.so beside libdec_tp2_<DxAxF>.so in the same
# processes, with torch.compile, at Llama-3-8B's, Llama-2-13B's and
# Llama-3-70B's widths.
#   (here)   TP_WORLDS=2 DECODER_WIDTHS="4096x2048x7168 5120x2560x6912 8192x4096x14336" \
#              LAYER_FLAGS="--chip sm_90a [--rows-lamport-max-bytes=4194304]" \
#              bench/device/matmul_build.sh target/wd[r], both into one folder
#   (device) bash bench/device/rows_lamport_2m_x2.sh target/wdx
set -uo pipefail
B=${1:?usage: rows_lamport_2m_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
export LAYER_WEIGHT_COPIES=3 TORCH_VARIANTS=two_shot LAYER_TOKENS=${LAYER_TOKENS:-96,128,160,200,256}
for w in ${DECODER_WIDTHS:-4096x2048x7168 5120x2560x6912 8192x4096x14336}; do
  IFS=x read -r d a f <<< "$w"
  LAYER_WIDTHS=$d,$((2 * f)) run timeout 250 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$L/libdec_tp2_$w.so" \
    "r4=$L/libdec_tp2_${w}_r4.so" > /tmp/dec.log 2>&1
  cat /tmp/dec.log >> "$OUT/decoder.log"
  bench_columns "$w" /tmp/dec.log symm_us symm_r4_us symm_cg_us symm_r4_cg_us torch_compile_best_us | tee -a "$OUT/summary.log"
done
