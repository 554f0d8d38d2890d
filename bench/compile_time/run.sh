#!/usr/bin/env bash
# symm-compile's compile time against program size (issue 35): one function
# with N collectives, and N small entry points, for N = 1k..16k. Prints a
# markdown table with each time and its ratio to the 1k time, beside
# n log n's ratio, the growth allowed.
#   bench/compile_time/run.sh [SYMM_COMPILE] [SIZES...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
compile=${1:-$here/../../target/release/symm-compile}
shift || true
sizes=("${@:-1000 2000 4000 8000 16000}")
read -r -a sizes <<< "${sizes[*]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "| input | N | seconds | max RSS (MB) | time / time(N0) | n log n ratio |"
echo "|---|---:|---:|---:|---:|---:|"
for kind in collectives entries; do
  base=""
  for n in "${sizes[@]}"; do
    python3 "$here/gen.py" "$kind" "$n" > "$work/in.mlir"
    /usr/bin/time -f "%e %M" -o "$work/time" "$compile" "$work/in.mlir" -o "$work/out.o" 2> "$work/err" \
      || { cat "$work/err"; exit 1; }
    read -r seconds kb < "$work/time"
    base=${base:-$seconds}
    n0=${n0:-$n}
    python3 - "$kind" "$n" "$seconds" "$kb" "$base" "$n0" <<'PY'
import math, sys
kind, n, s, kb, base, n0 = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
nlogn = (n * math.log(n)) / (n0 * math.log(n0))
print(f"| {kind} | {n} | {s:.2f} | {kb/1024:.0f} | {s/base:.2f} | {nlogn:.2f} |")
PY
  done
  unset n0
done
