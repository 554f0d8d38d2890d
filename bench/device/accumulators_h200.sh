#!/usr/bin/env bash
# Issue 32, session 43 (one H200): the 16-row wgmma GEMV with two
# accumulator sets (GemvTile::accumulators) against HEAD before it.
# Build: ring_before_wait_build.sh DIR, then HEAD's (c87ccef) MLP block and
# decoders as DIR/layers/libmlpH_4096x7168.so and libdecH_<widths>.so.
#   timing   kernels per call in a CUDA graph, 3 weight copies, forced
#            generated, PDL on: MLP 4096/7168 and the decoders (TP 2's and
#            TP 8's widths), HEAD (H) against the build; ROUNDS rounds
#   alone    PDL off: the down projection alone, HEAD, the build, cuBLAS
#   checks   as ring_before_wait_h200.sh's, and its sanitizer part
#   bash bench/device/accumulators_h200.sh target/ac
B=${1:-target/ac}
ALL_PARTS="timing alone checks sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  blocks_ab "mlpH:decH mlp:dec" 2,8,9,16 2,8,16 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part alone; then
  for v in "generated mlpH" "generated mlp" "library mlp"; do
    set -- $v
    echo "== $2 $1 alone"
    SYMM_MATMUL=$1 SYMM_PDL=0 run py "$L/lib$2_4096x7168.so" 4096 7168 --profile 2,16 --profile-copies 3
  done 2>&1 | grep -v Warning | tee "$OUT/alone.log"
fi
if part checks || part sanitize; then
  PARTS="$(part checks && echo checks) $(part sanitize && echo sanitize)" \
    bash "$(dirname "$0")/ring_before_wait_h200.sh" "$B"
fi
