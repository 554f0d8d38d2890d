#!/usr/bin/env bash
# Builds what library_h200x2.sh runs into DIR: everything issue13_build.sh
# builds (this tree's apps, GPU tests, compiled all-reduce benchmark and
# BEFORE's), plus BEFORE's runtime, whose library kernels were
# hand-generated PTX, under this tree's all-reduce benchmark harness
# (bench/allreduce/main.rs, its imports adjusted), for a before/after of
# the runtime's kernels now that the compiler generates them. BEFORE is a
# worktree of the commit before (548164b):
#
#   git worktree add /tmp/before 548164b
#   bench/device/library_build.sh target/library /tmp/before
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: library_build.sh DIR BEFORE_WORKTREE}
before=${2:?usage: library_build.sh DIR BEFORE_WORKTREE}
sed 's/library::{Algorithm, Dtype, ReduceOp}/kernels::{Algorithm, Dtype, ReduceOp}/' \
  bench/allreduce/main.rs > "$before/bench/allreduce/main.rs"
(cd "$before" && CARGO_TARGET_DIR="$before/target" cargo build -q --release \
  -p symm-compile -p symm-runtime -p symm-runtime-clib --features symm-runtime/launcher --bin symm-compile --bin symm-allreduce-bench)
bench/device/issue13_build.sh "$out" "$before/target/release"
cp "$before/target/release/symm-allreduce-bench" "$out/symm-allreduce-bench-before"
# What the device run does not use (the carried folder's limit is 64 MiB).
rm -rf "$out"/{llama_mlp_bad_ptx,llama_mlp_rust,math_accuracy,row_ops,tp_mlp,tp_mlp_m128,tp_mlp_w4,tp_mlp_large,src}
echo "built into $out: $(ls "$out" | tr '\n' ' ')"
