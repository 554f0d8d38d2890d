#!/usr/bin/env bash
# Session 21, one H200: the Llama MLP block with nn.Linear-layout weights
# (bench/model/linear_mlp.mlir: each matmul reads its weight transposed)
# against torch's f32 reference at three widths, world size 1 and TP 2 / 4
# with ranks sharing the GPU, in graphs and not (matmul_check.py calls each
# count three times, the third from a graph of ours); then the runtime's
# matmul-pair GPU test (weights k x n and n x k); then kernels per call in a
# CUDA graph beside the row-major block of the same widths; then
# (regression) the row-major block at TP 1 / 2 and the C++ Llama apps, whose
# pair now passes the layout code.
#   (here)   WIDTHS=4096x7168 LINEAR_WIDTHS="4096x7168 3072x8192 2064x1000" TP_WORLDS="2 4" \
#              bash bench/device/matmul_build.sh target/tl && (cd target && tar -cJf tl.tar.xz tl)
#   (device) tar -xJf target/tl.tar.xz -C target && bash bench/device/linear_h200.sh target/tl [PARTS]
# PARTS: "checks gpu_tests speed regression" unless given.
set -uo pipefail
B=${1:?usage: linear_h200.sh BUILD_DIR [PARTS]}
parts=" ${2:-checks gpu_tests speed regression} "
. "$(dirname "$0")/lib.sh"
WIDTHS=${WIDTHS:-4096x7168 3072x8192 2064x1000}
layer_checks_setup
if [[ $parts == *" checks "* ]]; then
  for w in $WIDTHS; do
    run tp_py 1 "$L/liblinear_$w.so" "${w%x*}" "${w#*x}" --linear \
      --tokens 1,2,3,7,8,9,15,16,17,33,64,65,100,128,129,256,300,1024,2048
    for world in 2 4; do
      run tp_py "$world" "$L/liblinear_tp${world}_$w.so" "${w%x*}" "${w#*x}" --linear \
        --tokens 1,3,9,16,17,65,129,2048
    done
  done 2>&1 | tee "$OUT/linear_checks.log"
  tally checks "$OUT/linear_checks.log"
fi
if [[ $parts == *" gpu_tests "* ]]; then
  nvidia_libraries
  SYMM_LOG=info run timeout 200 "$B/symm-launch" -n 1 "$B/symm-gpu-tests" matmul-pair 2>&1 | tee "$OUT/linear_gpu_tests.log"
fi
if [[ $parts == *" speed "* ]]; then
  for round in 1 2; do
    for lib in linear mlp; do
      echo "== $lib 4096x7168 round $round"
      run py "$L/lib${lib}_4096x7168.so" 4096 7168 $([[ $lib == linear ]] && echo --linear) \
        --tokens 1 --profile 1,16,128
    done
  done 2>&1 | tee "$OUT/linear_speed.log"
fi
if [[ $parts == *" regression "* ]]; then
  {
    run tp_py 1 "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,2,16,17,128,129,2048
    run tp_py 2 "$L/libmlp_tp2_4096x7168.so" 4096 7168 --tokens 1,16,129,2048
    nvidia_libraries
    llama_apps
  } 2>&1 | tee "$OUT/linear_regression.log"
  echo "regression: $(grep -c 'PASS' "$OUT/linear_regression.log") PASS lines, $(grep -c 'FAIL' "$OUT/linear_regression.log") FAIL, $(grep '^exit status' "$OUT/linear_regression.log" | grep -vc 'status 0$') non-zero exits"
fi
