#!/usr/bin/env bash
# Builds what stream_norm_h200.sh runs into DIR (issue 32, session 13: the
# pair's tensor-core GEMV applies its RMSNorm as it reads `a`, `stream-norm`,
# on by default): everything matmul_build.sh builds, plus at world size 1
#   - the 8192/3584 block (a TP-8 rank of Llama-3-70B: 16 staged rows of
#     K = 8192 do not fit in shared memory, so only the streamed pair runs
#     it on the tensor cores; `_staged`: with --no-matmul-stream-norm,
#     where the pair falls back to the tensor-core kernel);
#   - the 4096/7168 block with the rows staged (`staged`,
#     --no-matmul-stream-norm: the build before) and streamed (`streamed`),
#     and without its RMSNorm (`nonorm`, timing only: its check fails).
#
#   bench/device/stream_norm_build.sh target/sn && tar -cJf target/sn.tar.xz -C target sn
out=${1:?usage: stream_norm_build.sh DIR}
. "$(dirname "$0")/variant_layers.sh"
layer mlp_8192x3584_staged "$out/src/mlp_8192x3584.mlir" --no-matmul-stream-norm
layer streamed "$out/src/mlp.mlir"
layer staged "$out/src/mlp.mlir" --no-matmul-stream-norm
layer nonorm "$out/src/nonorm.mlir"
finish
