#!/usr/bin/env bash
# Builds what lamport_send_h200.sh runs into DIR (issue 32, session 14: the
# down projection's GEMVs send each split-K slice into the all-reduce's
# Lamport areas themselves, symm-compile --matmul-lamport-send): everything
# matmul_build.sh builds, with that flag (layers at five widths, the C++
# apps), and the 4096/7168 block without it (`nosend`, the default build).
#
#   bench/device/lamport_send_build.sh target/ls && tar -cJf target/ls.tar.xz -C target ls
out=${1:?usage: lamport_send_build.sh DIR}
export LAYER_FLAGS=--matmul-lamport-send
. "$(dirname "$0")/variant_layers.sh"
layer nosend "$out/src/mlp.mlir"
finish
