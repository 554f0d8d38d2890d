#!/usr/bin/env bash
# Issue 32, session 20, one H200: the build with the lone-matmul fusions and
# the early-launch credit that names the site before (90cb13d): the C++
# Llama apps (world size 1 and TP 2 sharing the GPU, measured and forced
# generated), the Llama MLP block at four widths at the dispatch edges, and
# the GELU block's measured choice against the previous compiler's build
# (kernels per call in a CUDA graph, the decisions logged), two rounds.
#   (here)   GELU_WIDTHS="4096x7168 4096x11008" bash bench/device/matmul_build.sh target/s20
#            (+ layers/libgelu_old_<w>.so: the same sources by the previous compiler)
#   (device) bash bench/device/session20_h200.sh target/s20
set -uo pipefail
B=${1:?usage: session20_h200.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=30
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
llama_apps 2>&1 | tee "$OUT/apps.log"
widths_checks_measured() {
  for w in 4096x7168 3072x8192 5120x1728 2064x1000; do
    for way in generated measured; do
      SYMM_MATMUL=$way run py "$B/layers/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,4,5,8,9,15,16,17,64
    done
  done
}
widths_checks_measured 2>&1 | tee "$OUT/widths.log"
for round in 1 2; do
  for w in 4096x11008 4096x7168; do
    for lib in gelu gelu_old; do
      echo "== $lib $w measured round $round"
      SYMM_LOG=info SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \
        run timeout 200 "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$B/layers/lib${lib}_$w.so" \
        "${w%x*}" "${w#*x}" --gelu --tokens 1,4,16 --profile 1,4,16
    done
  done
done 2>&1 | tee "$OUT/gelu_measured.log"
for f in apps widths; do
  echo "$f: $(grep -c 'PASS' "$OUT/$f.log") PASS, $(grep -c 'FAIL' "$OUT/$f.log") FAIL"
done
