#!/usr/bin/env bash
# Issue 32, session 33: a register-streaming GEMV stages its rows of `a`
# only where its shared memory leaves L1 at least the 196 KB step's 60 KB
# (gemv::L1_KEEPING_SHARED). Builds into DIR, with matmul_build.sh, the MLP
# block at the widths it changes (world size 1, and TP 2 for the checks):
#   5120/13824  the down projection's split-K slices of K = 6912 read `a`
#               from global memory (staged: 221.7 KB of shared memory);
#   6656/7168   the pair streams its norm (staged: 213.5 KB);
#   4096/7168   unchanged (the pair's 131.6 KB);
# and the same blocks compiled by OLD_COMPILE (the compiler before the
# rule) as libold_<D>x<F>.so.
#   cargo build --release -p symm-compile at the commit before; cp target/release/symm-compile /tmp/symm-compile-old
#   OLD_COMPILE=/tmp/symm-compile-old bench/device/l1_staging_build.sh target/l1
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: l1_staging_build.sh DIR}
old=${OLD_COMPILE:?the compiler before the rule}
widths="5120x13824 6656x7168 4096x7168"
WIDTHS=$widths TP_WORLDS=2 bench/device/matmul_build.sh "$out"
export SYMM_LIBDEVICE=${SYMM_LIBDEVICE:-$PWD/.deps/libdevice/libdevice.10.bc}
src=$(mktemp -d)
for w in $widths; do
  sed -e 's/world_size(2)/world_size(1)/' -e "s/4096/${w%x*}/g" -e "s/7168/${w#*x}/g" examples/llama_mlp.mlir > "$src/$w.mlir"
  "$old" "$src/$w.mlir" -o "$src/old_$w.o"
  c++ -shared -o "$out/layers/libold_$w.so" "$src/old_$w.o" -L"$out/layers" -lsymm_runtime -Wl,-rpath,'$ORIGIN'
  target/release/symm-compile "$src/$w.mlir" -o "$src/new_$w.o" --remarks 2>&1 | grep -i "norm as it reads\|L1" || true
done
strip "$out"/layers/libold_*.so
rm -rf "$src" "$out"/llama_decoder_w* "$out"/llama_mlp_w1 "$out"/symm-gpu-tests
echo "built into $out ($(du -sh "$out" | cut -f1))"
