#!/usr/bin/env bash
# Session 29, 2x H200 (TP 2): captured calls replayed as their CUDA graph
# or as their kernels launched one by one (runtime/src/launch_list.rs,
# replay_way.rs), forced either way (SYMM_GRAPH_REPLAY=graph / launches)
# and measured (the default), beside torch.compile (Inductor) in CUDA
# graphs, 3 weight copies, the floor first. Then the C++ apps on two GPUs
# with every replay forced to launches and measured, on the runtime's and
# the legacy stream (each replay checked against the synchronizing call),
# and the runtime's GPU tests.
#   (here)   WIDTHS="4096x7168 2064x1000" DECODER_WIDTHS=4096x2048x7168 TP_WORLDS=2 \
#              bench/device/matmul_build.sh target/s29
#            python/build_layer.sh examples/llama_{mlp,decoder}.mlir target/s29/layers
#            tar -cJf target/s29.tar.xz -C target s29/layers s29/symm-launch s29/symm-gpu-tests \
#              s29/llama_mlp_w2 s29/llama_decoder_w2
#   (device) tar -xJf target/s29.tar.xz -C target && bash bench/device/replay_launches_x2.sh target/s29
# PARTS (default "bench apps tests"; also "decoder16" and "manykeys") picks
# parts. For manykeys, also carry s29/layers/libmlp_4096x7168.so.
set -uo pipefail
B=${1:?usage: replay_launches_x2.sh BUILD}
. "$(dirname "$0")/lib.sh"
ALL_PARTS="bench apps tests"
layer_checks_setup
export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model
if part bench; then
  floor_read 2>&1 | tee "$OUT/floor.log"
  export LAYER_TOKENS=${LAYER_TOKENS:-1,16,128} LAYER_WEIGHT_COPIES=3 TORCH_VARIANTS=one_shot,two_shot
  # ROUNDS (default "1") and WAYS (default "graph launches measured").
  for round in ${ROUNDS:-1}; do
  for way in ${WAYS:-graph launches measured}; do
    for bench in layer decoder; do
      lib=$L/libllama_mlp.so
      [[ $bench == decoder ]] && lib=$L/libllama_decoder.so
      SYMM_LOG=info SYMM_GRAPH_REPLAY=$way run timeout 170 torchrun --nproc_per_node=2 \
        bench/model/${bench}_bench.py "$lib" 2>&1 | grep -v -e Warning -e "symmetric buffer" \
        > "$OUT/${bench}_${way}_$round.log"
      grep -E "rank 0.*replays (as|its)" "$OUT/${bench}_${way}_$round.log" | sort | uniq -c
      bench_columns "${bench}_${way}_$round" "$OUT/${bench}_${way}_$round.log" symm_us symm_cg_us \
        torch_compile_best_us
    done
  done
  done 2>&1 | tee "$OUT/summary.log"
fi
# The decoder at 16 rows alone, the modes in both orders: in calls 2, 3 and
# 6 the measured processes (which ran 1-row launch lists first, then
# replayed the same 16-row graphs as graph mode) were 0.6-1.8 µs slower
# there, always after the graph processes. Is it the 1-row lists, or the
# order?
if part decoder16; then
  for way in measured graph graph measured; do
    SYMM_GRAPH_REPLAY=$way LAYER_TOKENS=16 LAYER_WEIGHT_COPIES=3 TORCH_VARIANTS=two_shot \
      run timeout 170 torchrun --nproc_per_node=2 bench/model/decoder_bench.py \
      "$L/libllama_decoder.so" 2>&1 | grep -v -e Warning -e "symmetric buffer" > "$OUT/decoder16_$way.log"
    bench_columns "decoder16_$way" "$OUT/decoder16_$way.log" symm_us symm_cg_us torch_compile_best_us
  done 2>&1 | tee "$OUT/decoder16.log"
fi
# A model's pattern of calls (bench/model/many_keys.py: each layer its own
# weights, so its own graph; world size 1 on GPU 0) with graphs forced and
# with the measured choice, on the legacy stream (lists are not paced there,
# graph replays are) and on torch's own stream, each checked against torch's
# f32 reference. Needs $B/layers/libmlp_4096x7168.so (matmul_build.sh).
if part manykeys; then
  for way in graph measured; do
    for shape in "80 16" "32 1,16,17"; do
      for stream in "" --stream; do
        echo "== SYMM_GRAPH_REPLAY=$way layers/tokens $shape $stream"
        SYMM_GRAPH_REPLAY=$way SYMM_LOG=warn CUDA_VISIBLE_DEVICES=0 run timeout 200 \
          "$B/symm-launch" -n 1 python3 bench/model/many_keys.py "$L/libmlp_4096x7168.so" 4096 7168 \
          --layers "${shape% *}" --tokens "${shape#* }" --steps 10 --check $stream
      done
    done
  done 2>&1 | grep -v Warning | tee "$OUT/many_keys.log"
  tally many_keys "$OUT/many_keys.log"
fi
if part apps; then
  run python3 bench/model/reference.py --out /tmp/ref --m 1 9 16 17 128 2048 > /dev/null
  # SYMM_LOG=debug: which graphs have a launch list (and how many of their
  # kernels carry attributes of their own), and why the others have none.
  for way in ${APP_WAYS:-launches measured}; do
    for stream in runtime legacy; do
      for app in llama_mlp_w2 llama_decoder_w2; do
        SYMM_LOG=debug SYMM_GRAPH_REPLAY=$way run timeout 150 "$B/symm-launch" -n 2 "$B/$app" /tmp/ref \
          --tokens=1,9,16,17,128,2048 --iterations=8 --stream=$stream 2>&1 \
          | grep -v "symmetric buffer" \
          | grep -E "PASS|FAIL|replays|may replay|error|exit status" \
          | sed -E 's/partition 0x[0-9a-f]+/partition P/' | sort | uniq -c
      done
    done
  done 2>&1 | tee "$OUT/apps.log"
  tally apps "$OUT/apps.log"
  # A malformed setting fails the call, naming the variable.
  SYMM_GRAPH_REPLAY=fast run timeout 60 "$B/symm-launch" -n 2 "$B/llama_mlp_w2" /tmp/ref \
    --tokens=1 --iterations=2 2>&1 | grep -E "SYMM_GRAPH_REPLAY|exit status" | sort | uniq -c | tee "$OUT/malformed.log"
fi
if part tests; then
  run timeout 200 "$B/symm-launch" -n 2 "$B/symm-gpu-tests" 2>&1 | grep -E "passed|FAIL" | tee "$OUT/gpu_tests.log"
fi
