#!/usr/bin/env bash
# Issue 32, session 13, one H200: A/B of the tensor-core GEMV's reads of
# `a` (builds target/sn: rows read in the step of their `mma`s; target/sn2:
# read a step ahead with the weight), the 4096/7168 block at world size 1,
# forced generated, kernels per call in a CUDA graph, two rounds:
#   staged   the pair stages its normalized rows (the default before);
#   streamed the pair applies its RMSNorm as it reads `a` (stream-norm);
#   nonorm   no RMSNorm (timing only: its check fails);
# then the 8192/3584 block (16 staged rows do not fit): streamed, the
# tensor-core kernel (`_staged`: --no-matmul-stream-norm) and cuBLAS.
#   (device) for b in sn sn2; do tar -xJf target/$b.tar.xz -C target; done
#            bash bench/device/stream_norm_ab_h200.sh
set -uo pipefail
B=target/sn2
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=20
date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for lib in sn/layers/libstaged sn2/layers/libstaged sn/layers/libstreamed sn2/layers/libstreamed \
      sn/layers/libnonorm sn2/layers/libnonorm; do
    echo "== $lib round $round"
    SYMM_MATMUL=generated run py "target/$lib.so" 4096 7168 --tokens 2,16 --profile 2,8,16
  done
done 2>&1 | tee "$OUT/ab.log"
for round in 1 2; do
  for way in "generated libmlp_8192x3584" "generated libmlp_8192x3584_staged" "library libmlp_8192x3584"; do
    echo "== ${way#* } ${way% *} round $round"
    SYMM_MATMUL=${way% *} run py "$B/layers/${way#* }.so" 8192 3584 --tokens 2,16 --profile 2,8,16
  done
done 2>&1 | tee "$OUT/wide.log"
