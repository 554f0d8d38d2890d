#!/usr/bin/env bash
# Runs ring_before_wait_build.sh's build on one H200 (issue 32, session 42):
#   timing  kernels per call in a CUDA graph, 3 weight copies, forced
#           generated, PDL on: the MLP block (4096/7168) and the decoders
#           (TP 2's and TP 8's widths) with the after-GEMV ring against
#           without (mlp0, dec0); two rounds (ROUNDS)
#   alone   the MLP block with PDL off (each kernel alone), forced
#           generated and forced cuBLAS: the down projection's read
#   choice  the runtime's measured choice (SYMM_LOG=info)
#   checks  against torch's f32 reference: 4 widths at 1-17 rows, TP 2 and
#           4 sharing the GPU, the decoders, and the C++ apps
#   sanitize memcheck and racecheck of the ring at 9 and 16 rows
#   bash bench/device/ring_before_wait_h200.sh target/rb
B=${1:-target/rb}
ALL_PARTS="timing alone choice checks sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  blocks_ab "mlp0:dec0 mlp:dec" 2,8,9,16 2,8,16 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part alone; then
  for way in generated library; do
    for v in mlp0 mlp; do
      echo "== $v $way alone"
      SYMM_MATMUL=$way SYMM_PDL=0 run py "$L/lib${v}_4096x7168.so" 4096 7168 --profile 2,9,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/alone.log"
fi
if part choice; then
  SYMM_LOG=info run py "$L/libmlp_4096x7168.so" 4096 7168 --profile 2,9,16 --profile-copies 3 2>&1 \
    | grep -v Warning | tee "$OUT/choice.log"
fi
if part checks; then
  {
    for w in 4096x7168 5120x1728 3072x8192 2064x1000; do
      SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,3,8,9,15,16,17
    done
    for world in 2 4; do
      for w in 4096x7168 5120x1728; do
        SYMM_MATMUL=generated run tp_py "$world" "$L/libmlp_tp${world}_$w.so" "${w%x*}" "${w#*x}" --tokens 2,9,16
      done
    done
    for w in 4096x2048x7168 4096x512x1792; do
      SYMM_MATMUL=generated dec_py "dec_$w" "$w" --tokens 1,2,9,16,17
      IFS=x read -r d a f <<< "$w"
      SYMM_MATMUL=generated run tp_py 2 "$L/libdec_tp2_$w.so" "$d" "$f" --decoder "$a" --tokens 2,9,16
    done
    apps_checks 1,9,16,17 1,4,9,16,17
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  SANITIZE_KERNELS=wgmma SANITIZE_TOKENS=9,16 sanitize_mma "memcheck racecheck" 4096x7168 2>&1 \
    | tee "$OUT/sanitize.log"
fi
