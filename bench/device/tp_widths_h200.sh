#!/usr/bin/env bash
# Issue 32, session 20, one H200: the MLP block at widths no earlier check
# ran (hidden sizes that are no multiple of 8: rows of the all-reduce that
# end mid-vector), at world size 1 and tensor-parallel with 2, 4 and 8
# ranks sharing the GPU (symm-launch --gpus 1), against torch's f32
# reference of the whole block (bench/model/matmul_check.py: each rank
# draws the full weights, takes its shard, checks the all-reduced output).
# Correctness only: ranks sharing a GPU take turns, so times mean nothing.
#   (here)   WIDTHS="1001x2050 4100x7170 4098x7168 1000x2064 4104x7184 5120x1728 4096x7168" \
#              TP_WORLDS="2 4 8" bash bench/device/matmul_build.sh target/tw
#            (cd target && tar -cJf tw.tar.xz tw)
#   (device) tar -xJf target/tw.tar.xz -C target && bash bench/device/tp_widths_h200.sh target/tw SECTION
# SECTION: w1 (the odd widths at world size 1), tp2, tp4 or tp8; dec1,
# dec2, dec4 or dec8: the decoder half-layer (matmul_check.py --decoder)
# at DECODER_WIDTHS, built by
#   WIDTHS=" " DECODER_WIDTHS="..." TP_WORLDS="2 4 8" bash bench/device/matmul_build.sh target/td
set -uo pipefail
B=${1:?usage: tp_widths_h200.sh BUILD_DIR SECTION}
section=${2:?usage: tp_widths_h200.sh BUILD_DIR SECTION}
. "$(dirname "$0")/lib.sh"
OUT=${OUT:-/tmp}
export SYMM_TIMEOUT_S=30
L=$B/layers
WIDTHS=${WIDTHS:-1001x2050 4100x7170 4098x7168 1000x2064 4104x7184 5120x1728 4096x7168}
TOKENS=${TOKENS:-1,2,3,7,8,9,15,16,17,33,64,65,127,128,129,300,1000,2048}
check() { tp_py "$@" --tokens "$TOKENS"; } # world layer D F [options]
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
case $section in
  w1) for w in 1001x2050 4100x7170 4098x7168; do
        for way in generated measured; do
          SYMM_MATMUL=$way run check 1 "$L/libmlp_$w.so" "${w%x*}" "${w#*x}"
        done
      done ;;
  tp2) for w in $WIDTHS; do
         for way in generated measured; do
           SYMM_MATMUL=$way run check 2 "$L/libmlp_tp2_$w.so" "${w%x*}" "${w#*x}"
         done
       done ;;
  tp4|tp8) world=${section#tp}
       for w in $WIDTHS; do
         SYMM_MATMUL=${WAY:-generated} run check "$world" "$L/libmlp_tp${world}_$w.so" "${w%x*}" "${w#*x}"
       done ;;
  dec*) world=${section#dec}
       for w in ${DECODER_WIDTHS:-4100x2050x7170 1001x504x2050 5120x2560x1728 2064x1032x1000 4096x2048x7168}; do
         IFS=x read -r d a f <<< "$w"
         name=dec_tp${world}_$w
         [[ $world == 1 ]] && name=dec_$w
         ways=${WAY:-generated}
         [[ $world -le 2 && -z ${WAY:-} ]] && ways="generated measured"
         for way in $ways; do
           SYMM_MATMUL=$way run check "$world" "$L/lib$name.so" "$d" "$f" --decoder "$a"
         done
       done ;;
  *) echo "unknown section $section"; exit 2 ;;
esac 2>&1 | tee "$OUT/tp_widths_$section.log"
log=$OUT/tp_widths_$section.log
echo "$section: $(grep -c 'PASS ' "$log") PASS lines, $(grep -c 'FAIL' "$log") FAIL lines; exit statuses: $(grep -c '^exit status 0' "$log") zero, $(grep '^exit status' "$log" | grep -vc 'status 0$') non-zero"
