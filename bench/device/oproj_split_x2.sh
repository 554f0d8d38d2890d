#!/usr/bin/env bash
# Issue 32, session 27, 2x H200 (build: oproj_split_build.sh). Does the
# decoder gain from splitting its output projection over K (o_proj at TP 2:
# K = 2048 < min-k 3072, so 64 blocks of the generated GEMVs on 132 SMs)?
# PARTS (default all):
#   bench   the floor; the TP-2 decoder as shipped and with --split-k-min-k
#           2048 as two layers of one decoder_bench.py process beside torch's
#           variants and torch.compile, 3 weight copies, two rounds; the
#           split build's kernels per call at 16 rows
#   w1      world size 1 on GPU 0, the decoders at TP 2/4/8's widths, as is
#           and with --split-k-min-k 512: checks at the dispatch edges, then
#           kernels per call at 1 and 16 rows on 3 weight copies (two rounds)
#   checks  the split builds at TP 2 against torch's f32 reference: the layer
#           (1..2048 rows) on 2 GPUs and with both ranks on one GPU, and the
#           C++ decoder app (--split-k-min-k 512) with both ranks on one GPU
#   (device) tar -xJf target/s27.tar.xz -C target && bash bench/device/oproj_split_x2.sh target/s27
set -uo pipefail
B=${1:?usage: oproj_split_x2.sh BUILD_DIR}
ALL_PARTS="bench w1 checks"
. "$(dirname "$0")/lib.sh"
layer_checks_setup
if part bench; then
  floor_read 2>&1 | tee "$OUT/floor.log"
  (
    export SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model SYMM_LOG=info
    export TORCH_VARIANTS=one_shot,two_shot LAYER_TOKENS=1,16,128 LAYER_WEIGHT_COPIES=3
    for round in 1 2; do
      run timeout 200 torchrun --nproc_per_node=2 bench/model/decoder_bench.py "$L/libllama_decoder.so" \
        k2048="$L/libllama_decoder_k2048.so" 2>&1 | grep -v Warning | tee "$OUT/decoder_bench_$round.log"
      bench_columns "round $round" "$OUT/decoder_bench_$round.log" symm_us symm_k2048_us symm_cg_us \
        symm_k2048_cg_us torch_compile_best_us
    done
    PROFILE_BLOCK=decoder PROFILE_TOKENS=1,16 run timeout 120 torchrun --nproc_per_node=2 \
      bench/model/layer_profile.py "$L/libllama_decoder_k2048.so" 2>&1 | grep -v Warning \
      | tee "$OUT/profile_k2048.log"
  )
fi
if part w1; then
  for round in 1 2; do
    for w in 4096x2048x7168 4096x1024x3584 4096x512x1792; do
      IFS=x read -r d a f <<< "$w"
      for v in "" _k512; do
        echo "== dec_$w$v round $round"
        tokens=1,16; [[ $round == 1 ]] && tokens=1,2,8,9,16,17,128,129
        SYMM_LOG=info CUDA_VISIBLE_DEVICES=0 run py "$L/libdec_$w$v.so" "$d" "$f" --decoder "$a" \
          --tokens "$tokens" --profile 1,16 --profile-copies 3
      done
    done
  done 2>&1 | tee "$OUT/w1.log"
fi
if part checks; then
  (
    for v in "" _k2048; do
      SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model run timeout 200 \
        "$B/symm-launch" -n 2 python3 bench/model/matmul_check.py "$L/libllama_decoder$v.so" 4096 7168 \
        --decoder 2048 --tokens 1,2,8,9,16,17,32,33,64,65,128,129,2048
    done
    tp_py 2 "$L/libllama_decoder_k2048.so" 4096 7168 --decoder 2048 --tokens 1,9,16,17,33,129
    run python3 bench/model/reference.py --out /tmp/ref --m 1 4 9 16 17
    for way in measured generated; do
      SYMM_MATMUL=$way run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/llama_decoder_w2_k512" /tmp/ref \
        --tokens=1,9,17 --iterations=5
    done
  ) 2>&1 | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
