#!/usr/bin/env bash
# Issue 32, session 35, 2x H200 (TP 2): the Lamport one-shot up to 2 MiB on
# 2 ranks (above the barrier one-shot's 1 MiB, in place of the two-shot)
# and the widened single matmuls' 4 k-groups, beside the compiler before
# (HEAD f2b4d8f) and this one with --lamport-max-bytes=1048576, in the same
# processes, against torch.compile (Inductor) + CUDA graphs.
#   (here)   TP_WORLDS=2 WIDTHS="5120x6912 5120x13824 6656x8960 8192x14336" \
#              LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/wn
#            (and the same into target/wo at f2b4d8f, and into target/wl with
#            --lamport-max-bytes=1048576 added; their libmlp_tp2_*.so copied
#            into target/wn/layers as libmlp_tp2_*_old.so and *_l1m.so)
#   (device) bash bench/device/lamport_2m_x2.sh target/wn
# Parts (PARTS, all by default): gpu_tests (the runtime's Lamport and
# all-reduce tests on the two GPUs, up to 2 MiB), bench (widths_x2.sh with
# the variants), tp2 (TP 2 with both ranks on GPU 0 against torch's f32
# reference: forced generated at the GEMV edges, measured at the
# all-reduce's edges), sanitize (memcheck on our kernels of the TP-2 layers,
# both ranks on GPU 0). WIDTHS ("D,F ...") and TP2_WIDTHS ("DxF ...") replace the widths,
# TP2_TOKENS the measured rows of tp2.
set -uo pipefail
B=${1:?usage: lamport_2m_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
ALL_PARTS="gpu_tests bench tp2 sanitize"
TP2_WIDTHS=${TP2_WIDTHS:-5120x6912 6656x8960 8192x14336 5120x13824}
layer_checks_setup
if part gpu_tests; then
  for test in lamport all-reduce; do
    run timeout 200 "$B/symm-launch" -n 2 "$B/symm-gpu-tests" "$test"
  done 2>&1 | tee "$OUT/gpu-tests.log" | tail -8
fi
if part bench; then
  WIDTHS=${WIDTHS:-5120,13824 6656,17920 8192,28672 5120,27648} VARIANTS="old l1m" \
    LAYER_TOKENS=${LAYER_TOKENS:-1,16,128} bash "$(dirname "$0")/widths_x2.sh" "$B"
fi
if part tp2; then
  for w in $TP2_WIDTHS; do
    SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,9,16,17
    run tp_py 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}" --tokens "${TP2_TOKENS:-64,128,129,204,205,256}"
  done 2>&1 | tee "$OUT/tp2.log" | grep -v PASS
  tally tp2 "$OUT/tp2.log" | tee -a "$OUT/summary.log"
fi
if part sanitize; then
  SANITIZE_RANKS=2 SANITIZE_KERNELS=symm SANITIZE_TOKENS=16,128 \
    sanitize_mma memcheck "${SANITIZE_WIDTHS:-5120x6912}" 2>&1 | tee -a "$OUT/summary.log"
fi
