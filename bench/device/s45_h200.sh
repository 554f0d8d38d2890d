#!/usr/bin/env bash
# Issue 32, session 41, call 5 (one H200): do short grids (the normed pair
# on 27-74 blocks, where cuBLAS wins by 5-18 µs) gain from the in-loop L2
# prefetch `--matmul-mma-gemv-ahead N`? It lost on Llama-3-8B's full grids
# (session 26); these grids are bound by their bytes in flight.
#   export WIDTHS="8192x3584 6656x8960 3584x9472 5120x1728" TP_WORLDS=
#   for a in 0 4 8; do LAYER_FLAGS="--chip sm_90a --matmul-mma-gemv-ahead $a" \
#     bench/device/matmul_build.sh target/s45_$a; done
#   target/s45 = s45_0 with the others' layers as lib<name>_a<N>.so
#   bash bench/device/s45_h200.sh target/s45
B=${1:-target/s45}
. "$(dirname "$0")/lib.sh"
single_gpu_setup
for round in 1 2; do
  for w in 8192x3584 6656x8960 3584x9472 5120x1728; do
    for v in "" _a4 _a8; do
      echo "== mlp_$w$v round $round"
      SYMM_MATMUL=generated run py "$L/libmlp_$w$v.so" "${w%x*}" "${w#*x}" --tokens 2,16 --profile 2,16 --profile-copies 3
    done
  done
done 2>&1 | grep -v Warning | tee "$OUT/ahead.log"
tally ahead "$OUT/ahead.log"
