#!/usr/bin/env bash
# Issue 32, session 37 (one H200): cuBLAS's kernels chosen by measurement
# (runtime/src/gemm_algos.rs) against cuBLAS's default call, the same
# binaries with SYMM_GEMM_ALGO=default and =measured. Build:
#   WIDTHS="4096x7168 3584x9472 6656x8960" TP_WORLDS=2 DECODER_WIDTHS="4096x2048x7168" \
#     LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/ga
# PARTS:
#   tests   symm-gpu-tests gemm-algos and matmul-pair at world size 1 and on
#           2 ranks sharing the GPU (SYMM_LOG=info: each GEMM's times)
#   timing  kernels per call in a CUDA graph, world size 1, 3 weight copies:
#           the MLP block at three TP-2 widths and the decoder half-layer,
#           measured choice of generated kernels or cuBLAS (the default),
#           each policy of SYMM_GEMM_ALGO, taking turns
#   checks  against torch's f32 reference: world size 1 and TP 2 with the
#           ranks sharing the GPU, at row counts that run cuBLAS
#   apps    the C++ apps (the build's llama_* packed as apps.tar.xz, the carry
#           limit) against torch's f32 reference at 17-128 tokens: the MLP
#           block at world size 1, MLP and decoder at TP 2 sharing the GPU
#   bash bench/device/gemm_algos_h200.sh target/ga
B=${1:-target/ga}
ALL_PARTS="tests timing checks apps"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part tests; then
  {
    for t in gemm-algos matmul-pair; do
      SYMM_LOG=info run timeout 120 "$B/symm-launch" -n 1 "$B/symm-gpu-tests" "$t"
      run timeout 200 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests" "$t"
    done
  } 2>&1 | grep -v Warning | tee "$OUT/tests.log"
  tally tests "$OUT/tests.log"
fi
if part timing; then
  for round in 1 2; do
    for w in 4096x7168 3584x9472 6656x8960; do
      [[ $round == 2 && $w != 4096x7168 ]] && continue
      for algo in default measured; do
        echo "== mlp $w SYMM_GEMM_ALGO=$algo round $round"
        SYMM_GEMM_ALGO=$algo SYMM_LOG=info run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" \
          --profile 16,32,64,128,256 --profile-copies 3
      done
    done
    for algo in default measured; do
      echo "== decoder 4096x2048x7168 SYMM_GEMM_ALGO=$algo round $round"
      SYMM_GEMM_ALGO=$algo SYMM_LOG=info dec_py dec_4096x2048x7168 4096x2048x7168 \
        --profile 16,64,128 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part checks; then
  {
    run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,16,17,64,128,129,2048
    run py "$L/libmlp_3584x9472.so" 3584 9472 --tokens 17,128,2048
    run tp_py 2 "$L/libmlp_tp2_4096x7168.so" 4096 7168 --tokens 17,64,128,129,512
    run tp_py 2 "$L/libmlp_tp2_6656x8960.so" 6656 8960 --tokens 16,17,128
    dec_py dec_4096x2048x7168 4096x2048x7168 --tokens 17,128
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part apps; then
  [[ -f $B/apps.tar.xz ]] && tar -xJf "$B/apps.tar.xz" -C "$B"
  {
    run python3 bench/model/reference.py --out /tmp/ref --m 17 64 128
    SYMM_LOG=info run timeout 150 "$B/symm-launch" -n 1 "$B/llama_mlp_w1" /tmp/ref --tokens=17,64,128 --iterations=5
    for app in llama_mlp_w2 llama_decoder_w2; do
      run timeout 150 "$B/symm-launch" -n 2 --gpus 1 "$B/$app" /tmp/ref --tokens=17,64,128 --iterations=5
    done
  } 2>&1 | grep -v Warning | tee "$OUT/apps.log"
  tally apps "$OUT/apps.log"
fi
