#!/usr/bin/env bash
# Builds what library_h200x2.sh runs into DIR: everything issue13_build.sh
# builds (this tree's apps, GPU tests, compiled all-reduce benchmark and
# BEFORE's), plus BEFORE's runtime all-reduce benchmark, whose library
# kernels were hand-generated PTX, for a before/after of the runtime's
# kernels now that the compiler generates them.
#
#   bench/device/library_build.sh target/library /tmp/before/target/release
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: library_build.sh DIR BEFORE_RELEASE_DIR}
before=${2:?usage: library_build.sh DIR BEFORE_RELEASE_DIR}
bench/device/issue13_build.sh "$out" "$before"
cp "$before/symm-allreduce-bench" "$out/symm-allreduce-bench-before"
echo "built into $out: $(ls "$out" | tr '\n' ' ')"
