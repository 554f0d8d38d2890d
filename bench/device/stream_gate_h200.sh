#!/usr/bin/env bash
# Session 28, one H200: the measured choice behind a stream gate
# (runtime/src/stream_gate.rs). Ungated, a timing block of the measured
# choice started on the GPU as soon as its first launch arrived, so a host
# slower than the GPU was timed instead; cuBLAS's launches cost the host
# more than a generated kernel's, and on 2x H200 the decoder's o_proj at 16
# rows flipped between cuBLAS and the generated GEMV from process to
# process (cuBLAS timed 6.9-19.1 µs; its kernel ran 7.1-7.8 in profiles).
#   tests   symm-gpu-tests (its stream-gate test) at world size 1 and with 2
#           ranks on one GPU; the C++ apps at TP 2 on one GPU, measured.
#   choice  the decoder half-layer at TP 2's widths (world size 1) and the
#           MLP block, SYMM_LOG=info: each site's two times as measured,
#           with the runtime before the gate (B/old) and with it, the host
#           idle and with every core busy (a spinning shell per core); two
#           processes each. matmul_check.py checks every output against
#           torch's f32 reference.
#   profile the decoder's kernels per call at 16 rows on 3 weight copies,
#           forced each way: what the kernels take on the GPU.
#   (here)   WIDTHS=4096x7168 DECODER_WIDTHS=4096x2048x7168 bench/device/matmul_build.sh target/s28,
#            the pre-gate runtime (f3b78ef) beside copies of the layers in target/s28/old/layers;
#            tar -cJf target/s28.tar.xz -C target s28
#   (device) tar -xJf target/s28.tar.xz -C target && bash bench/device/stream_gate_h200.sh target/s28
set -uo pipefail
B=${1:?usage: stream_gate_h200.sh BUILD}
. "$(dirname "$0")/lib.sh"
ALL_PARTS="tests choice profile"
layer_checks_setup
busy=()
busy_start() { for _ in $(seq "$(nproc)"); do (while :; do :; done) & busy+=($!); done; }
busy_stop() { kill "${busy[@]}" 2>/dev/null; wait "${busy[@]}" 2>/dev/null; busy=(); }
trap busy_stop EXIT
if part tests; then
  {
    run timeout 200 "$B/symm-launch" -n 1 "$B/symm-gpu-tests"
    run timeout 300 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests"
    run python3 bench/model/reference.py --out /tmp/ref --m 1 9 16 17
    run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_mlp_w2" /tmp/ref --tokens=1,9,16,17 --iterations=5
    run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2" /tmp/ref --tokens=1,9,16,17 --iterations=5
  } 2>&1 | tee "$OUT/tests.log"
  tally tests "$OUT/tests.log"
fi
if part choice; then
  for load in idle busy; do
    [[ $load == busy ]] && busy_start
    for process in 1 2; do
      for rt in old new; do
        root=$B
        [[ $rt == old ]] && root=$B/old
        echo "== runtime $rt, host $load, process $process"
        B=$root SYMM_LOG=info run py "$root/layers/libdec_4096x2048x7168.so" 4096 7168 --decoder 2048 --tokens 8,16
        B=$root SYMM_LOG=info run py "$root/layers/libmlp_4096x7168.so" 4096 7168 --tokens 16
      done
    done
    busy_stop
  done 2>&1 | grep -E "^==|matmul site|matmul pair|PASS|FAIL|exit status|error|not counted" | tee "$OUT/choice.log"
  tally choice "$OUT/choice.log"
fi
if part profile; then
  for way in library generated; do
    echo "== SYMM_MATMUL=$way"
    SYMM_MATMUL=$way run py "$B/layers/libdec_4096x2048x7168.so" 4096 7168 --decoder 2048 --tokens 16 \
      --profile 16 --profile-copies 3
  done 2>&1 | grep -v Warning | tee "$OUT/profile.log"
fi
