#!/usr/bin/env bash
# The checks behind the Lamport rows kernel up to 1 MiB (128 rows of 4096
# bf16): the shared-GPU suite (apps at TP 2, 4, 8 against torch's f32
# reference, symm-gpu-tests, the error paths), then compute-sanitizer
# memcheck and racecheck on the decoder and attention-output apps at TP 2
# where the rows kernels now take Lamport (96 and 128 rows) and just above
# (129).
#   (here)   bench/device/shared_gpu_build.sh target/g24 && (cd target && tar -cJf g24.tar.xz g24)
#   (device) tar -xJf target/g24.tar.xz -C target && bash bench/device/rows_lamport_checks.sh target/g24
set -uo pipefail
B=${1:?usage: rows_lamport_checks.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
TOKENS=${TOKENS:-1,16,33,64,65,96,128,129,2048} bash "$(dirname "$0")/shared_gpu_checks.sh" "$B" "2 4 8"
{
  # racecheck on our kernels only (kns=symm_): cuBLAS's nvjet kernels show
  # hazards of their own asynchronous shared-memory pipelines.
  for tool in memcheck racecheck; do
    filter=()
    [[ $tool == racecheck ]] && filter=(--kernel-name kns=symm_)
    for layer in llama_decoder llama_attn_out; do
      run timeout 280 "$B/symm-launch" -n 2 --gpus 1 compute-sanitizer --tool $tool "${filter[@]}" \
        --error-exitcode 9 "$B/w2/$layer" /tmp/ref --tokens=96,128,129 --iterations=1
    done
  done
} 2>&1 | tee "$OUT/sanitizer.log"
tally "shared-GPU checks" "$OUT/shared_gpu_checks.log"
tally "sanitizer" "$OUT/sanitizer.log"
