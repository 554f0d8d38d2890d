#!/usr/bin/env bash
# Builds what stage_a_h200.sh runs into DIR (issue 32, session 13: calls of
# 2-8 rows run `mma16`, which reads `a` from global memory with each step
# where there is no prologue, and calls of 9-16 rows `mma16_staged`, which
# stages it in shared memory first; mma-gemv-stage-a, on by default):
# everything
# matmul_build.sh builds, plus at world size 1
#   - the 8192/3584 block (the pair streams its norm: 16 staged rows of
#     K = 8192 do not fit);
#   - the 4096/7168 block with one `mma16` for 2-16 rows, `a` read from
#     global memory where there is no prologue (`single16`,
#     --no-matmul-mma-stage-a: the build before), and both builds without
#     the pair's RMSNorm (`nonorm`, `nonorm_single16`: a pair with no
#     prologue, as the decoder's is; timing only, their checks fail).
#
#   bench/device/stage_a_build.sh target/sa && tar -cJf target/sa.tar.xz -C target sa
out=${1:?usage: stage_a_build.sh DIR}
. "$(dirname "$0")/variant_layers.sh"
layer single16 "$out/src/mlp.mlir" --no-matmul-mma-stage-a
layer nonorm "$out/src/nonorm.mlir"
layer nonorm_single16 "$out/src/nonorm.mlir" --no-matmul-mma-stage-a
finish
