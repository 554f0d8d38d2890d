#!/usr/bin/env bash
# Issue 32, session 33: the pair's tensor-core GEMV copying each warp's
# first STEPS weight steps into shared memory (`cp.async`) before its
# RMSNorm prologue, `--matmul-mma-gemv-copies STEPS`, so that more of the
# weight streams while the rows are staged than the registers' two steps
# (bench/results/2026-11-28-gemv-anatomy-h200.md put the prologue at about
# 2.5 µs of the 16-row pair). Not kept: every copied step made the pair
# slower (bench/results/2026-11-28-l1-carveout-h200.md); the compiler side
# is bench/device/prologue_copies.patch (git apply it first). Builds into DIR:
#   - everything matmul_build.sh builds, every layer and app with
#     --matmul-mma-gemv-copies 2, at four widths and TP 2 (the checks);
#   - the 4096/7168 block at world size 1 with 0 (the default), 1, 2 and 3
#     copied steps: libc0.so .. libc3.so (the timing).
#   bench/device/prologue_copies_build.sh target/cp
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: prologue_copies_build.sh DIR}
WIDTHS=${WIDTHS:-4096x7168 3072x8192 5120x1728 2064x1000} TP_WORLDS=${TP_WORLDS:-2} \
  DECODER_WIDTHS=${DECODER_WIDTHS:-} LAYER_FLAGS="--matmul-mma-gemv-copies 2" \
  bench/device/matmul_build.sh "$out"
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
src=$(mktemp -d)
sed -e 's/world_size(2)/world_size(1)/' examples/llama_mlp.mlir > "$src/mlp.mlir"
for c in 0 1 2 3; do
  target/release/symm-compile "$src/mlp.mlir" -o "$src/c$c.o" --matmul-mma-gemv-copies "$c"
  c++ -shared -o "$out/layers/libc$c.so" "$src/c$c.o" -L"$out/layers" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
done
strip "$out"/layers/libc*.so
rm -rf "$src"
echo "built into $out ($(du -sh "$out" | cut -f1))"
