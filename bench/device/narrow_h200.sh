#!/usr/bin/env bash
# Issue 32, session 36 (one H200): the register GEMVs of grids that waste a
# wave as 64-column bands, half the k-groups, two blocks an SM (`_nar`,
# narrow_build.sh) against HEAD's 128-column bands (default) and cuBLAS,
# at six TP-2 shard widths; with HEAD's own checks (the protocol check
# of 112dd0a and the review of 54514ef had not run on a device). PARTS:
#   timing  kernels per call at 1 and 16 rows, 3 weight copies, world size 1:
#           default and _nar forced generated, default forced cuBLAS
#   checks  _nar against torch's f32 reference, world size 1 at the GEMV
#           edges and TP 2 with the ranks sharing the GPU
#   unroll  the tensor-core pair GEMV with 3 and 4 steps in flight a warp
#           (`_u3`, `_u4`: symm-compile --matmul-mma-gemv 64,8,U, widened as
#           HEAD widens) against the default, 16 rows, two rounds
#   verify  HEAD: symm-gpu-tests (all-reduce, lamport) on 2 ranks sharing
#           the GPU, the TP-2 block to 513 rows
#   apps    the MLP block at TP 4 and 8 with the ranks sharing the GPU,
#           the C++ apps at TP 2 (apps.tar.xz)
#   protocol a block compiled against another protocol revision
#           (libmlp_badproto.so) must fail its first call
#   sanitize memcheck and racecheck on _nar's GEMVs at 6656x8960 (not run:
#           the narrow build was not kept)
#   ring    the down projections of three wide blocks on the opt-in wgmma
#           GEMV's ring (`_wgf`: --matmul-wgmma-gemv --matmul-wgmma-gemv-few,
#           `_wgf8`: and --matmul-wgmma-gemv-stages 8) against the default
#   ncu     the pair GEMV at 16 rows: 6656x8960 (70 blocks), its _nar (140),
#           8192x14336 (112 widened) and 4096x7168 (112), and 4096x7168's down
#   bash bench/device/narrow_h200.sh target/nw
B=${1:-target/nw}
ALL_PARTS="timing checks unroll verify apps protocol sanitize ncu ring"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
WIDTHS=${NWIDTHS:-"6656x8960 3584x9472 5120x13824 8192x14336 5120x6912 4096x7168"}
if part timing; then
  for round in ${ROUNDS:-1}; do
    for w in $WIDTHS; do
      d=${w%x*} f=${w#*x}
      echo "== $w round $round"
      SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "$d" "$f" --tokens 16 --profile 1,16 --profile-copies 3
      SYMM_MATMUL=generated run py "$L/libmlp_${w}_nar.so" "$d" "$f" --tokens 16 --profile 1,16 --profile-copies 3
      SYMM_MATMUL=library run py "$L/libmlp_$w.so" "$d" "$f" --tokens 16 --profile 1,16 --profile-copies 3
    done
  done 2>&1 | grep -v Warning | tee "$OUT/timing.log"
fi
if part unroll; then
  for round in 1 2; do
    for w in 6656x8960 3584x9472 5120x6912 4096x7168; do
      for v in "" _u3 _u4; do
        echo "== $w$v round $round"
        SYMM_MATMUL=generated run py "$L/libmlp_$w$v.so" "${w%x*}" "${w#*x}" --tokens 16 --profile 16 --profile-copies 3
      done
    done
  done 2>&1 | grep -v Warning | tee "$OUT/unroll.log"
fi
if part checks; then
  {
    for w in $WIDTHS 2064x1000; do
      SYMM_MATMUL=generated run py "$L/libmlp_${w}_nar.so" "${w%x*}" "${w#*x}" --tokens 1,2,8,9,16,17
    done
    for w in 6656x8960 3584x9472 5120x6912; do
      SYMM_MATMUL=generated run tp_py 2 "$L/libmlp_tp2_${w}_nar.so" "${w%x*}" "${w#*x}" --tokens 1,2,9,16,17
    done
    run py "$L/libmlp_6656x8960_nar.so" 6656 8960 --tokens 1,16,17,128
  } 2>&1 | grep -v Warning | tee "$OUT/checks.log"
  tally checks "$OUT/checks.log"
fi
if part verify; then
  {
    for t in all-reduce lamport; do
      run timeout 300 "$B/symm-launch" -n 2 --gpus 1 "$B/symm-gpu-tests" "$t" 2>&1 | tail -4
    done
    run tp_py 2 "$L/libmlp_tp2_4096x7168.so" 4096 7168 --tokens 1,16,128,129,257,512,513
    run tp_py 2 "$L/libmlp_tp2_6656x8960.so" 6656 8960 --tokens 1,16,128,129,315,316
  } 2>&1 | grep -v Warning | tee "$OUT/verify.log"
  tally verify "$OUT/verify.log"
fi
if part apps; then
  [[ -f $B/apps.tar.xz ]] && tar -xJf "$B/apps.tar.xz" -C "$B"
  {
    run tp_py 4 "$L/libmlp_tp4_4096x3584.so" 4096 3584 --tokens 1,16,64,65,128
    run tp_py 8 "$L/libmlp_tp8_4096x1792.so" 4096 1792 --tokens 1,16,32,33
  } 2>&1 | grep -v Warning | tee "$OUT/tp48.log"
  tally tp48 "$OUT/tp48.log"
  tp2_apps llama_mlp_w2 llama_decoder_w2 2>&1 | grep -v Warning | tee "$OUT/apps.log"
  tally apps "$OUT/apps.log"
fi
if part protocol; then
  # libmlp_badproto.so: the 4096/7168 block compiled by a symm-compile whose
  # symm_protocol::PROTOCOL_REVISION was 999, run on this runtime (1): its
  # first call must fail with the protocol error, not run.
  run py "$L/libmlp_badproto.so" 4096 7168 --tokens 1 2>&1 | grep -v Warning | tail -6 | tee "$OUT/protocol.log"
fi
if part sanitize; then
  SANITIZE_SUFFIX=_nar SANITIZE_TOKENS=1,16 sanitize_mma "memcheck racecheck" 6656x8960 2>&1 | tee "$OUT/sanitize.log"
fi
if part ncu; then
  for v in ${NCU_VARIANTS:-6656x8960:0 6656x8960_nar:0 8192x14336:0 4096x7168:0 4096x7168:1}; do
    lib=${v%:*} site=${v#*:} w=${lib%_nar}
    SYMM_PDL=0 SYMM_MATMUL=generated SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 200 ncu --target-processes all --kernel-name regex:"symm_matmul_${site}_mma16" --launch-skip 1 --launch-count 1 \
      --section SpeedOfLight --section Occupancy --section WarpStateStats --section SchedulerStats --section LaunchStats --section MemoryWorkloadAnalysis \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_$lib.so" "${w%x*}" "${w#*x}" --tokens 16
  done 2>&1 | grep -v Warning | tee "$OUT/ncu.log"
fi
if part ring; then
  for round in 1 2; do
    for w in 6656x8960 5120x6912 5120x13824; do
      for v in "" _wgf _wgf8; do
        echo "== $w$v round $round"
        SYMM_MATMUL=generated run py "$L/libmlp_$w$v.so" "${w%x*}" "${w#*x}" --tokens 16 --profile 8,16 --profile-copies 3
      done
    done
  done 2>&1 | grep -v Warning | tee "$OUT/ring.log"
fi
