#!/usr/bin/env bash
# Runs wgmma_prefill_build.sh's variants on one H200 (issue 32, session 42):
#   timing  kernels per call in a CUDA graph, 3 weight copies, forced
#           generated, PDL on: the MLP block's variants at 2, 8, 9 and 16
#           rows, the decoders with and without the prefill; two rounds (ROUNDS)
#   alone   the same with PDL off (each kernel after the one before)
#   checks  against torch's f32 reference: the prefill variants at 1-17
#           rows, a shard width, TP 2 sharing the GPU, the decoders
#   sanitize memcheck and racecheck of the prefilled wgmma16
#   bash bench/device/wgmma_prefill_h200.sh target/pf
B=${1:-target/pf}
ALL_PARTS="timing alone checks sanitize"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part timing; then
  for round in ${ROUNDS:-1 2}; do
    for v in ${VARIANTS:-base wg8 pf8 wg pf}; do
      echo "== $v round $round"
      SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --profile 2,8,9,16 --profile-copies 3
    done
    for w in 4096x2048x7168 4096x512x1792; do
      for v in dec decpf; do
        echo "== ${v}_$w round $round"
        SYMM_MATMUL=generated dec_py "${v}_$w" "$w" --profile 2,8,16 --profile-copies 3
      done
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part alone; then
  for v in base wg8 pf8; do
    echo "== $v alone"
    SYMM_MATMUL=generated SYMM_PDL=0 run py "$L/lib$v.so" 4096 7168 --profile 9,16 --profile-copies 3
  done 2>&1 | grep -v Warning | tee "$OUT/alone.log"
fi
if part checks; then
  {
    for v in pf pf8; do
      SYMM_MATMUL=generated run py "$L/lib$v.so" 4096 7168 --tokens 1,2,3,8,9,15,16,17
    done
    SYMM_MATMUL=generated run py "$L/libpf8_5120x1728.so" 5120 1728 --tokens 2,9,16,17
    SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_pf8_4096x7168.so" 4096 7168 --tokens 2,9,16
    for w in 4096x2048x7168 4096x512x1792; do
      SYMM_MATMUL=generated dec_py "decpf_$w" "$w" --tokens 1,2,9,16,17
      IFS=x read -r d a f <<< "$w"
      SYMM_MATMUL=generated run tp_py 2 "$L/libdec_tp2_pf_$w.so" "$d" "$f" --decoder "$a" --tokens 2,9,16
    done
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part sanitize; then
  for tool in memcheck racecheck; do
    SYMM_MATMUL=generated SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=$B/layers/libsymm_runtime.so \
      PYTHONPATH=python:bench/model timeout 150 compute-sanitizer --tool "$tool" \
      --target-processes all --kernel-name "kns=wgmma" "$B/symm-launch" -n 1 \
      python3 bench/model/matmul_check.py "$L/libpf8.so" 4096 7168 --tokens 9,16 2>&1 \
      | grep "SUMMARY\|Internal\|PASS\|FAIL\|rror" | sort | uniq -c | cut -c1-200
    echo "== $tool done"
  done 2>&1 | tee "$OUT/sanitize.log"
fi
