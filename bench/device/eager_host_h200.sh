#!/usr/bin/env bash
# Issue 32, session 32: the lowered launches ask the driver once per kernel
# (runtime/src/kernel_facts.rs) where each launch looked its kernel up by
# name and read (and for dynamic shared memory past 48 KB set) its shared
# memory attributes. One H200:
#   1. the layers against torch's f32 reference with the new runtime,
#      eager (SYMM_CUDA_GRAPHS=0) and in graphs, world size 1 and TP 2 with
#      the ranks sharing the GPU;
#   2. the host's time per eager call (bench/model/eager_host.py), the
#      runtime before ($B/old) and after ($B/layers), same layers, three
#      rounds in turn.
#   (here) WIDTHS="4096x7168 2064x1000" DECODER_WIDTHS=4096x2048x7168 TP_WORLDS=2 \
#            LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/ek
#          mkdir target/ek/old; cp target/ek/layers/lib{mlp_4096x7168,dec_4096x2048x7168}.so \
#            target/ek/old/; cp OLD_BUILD/layers/libsymm_runtime.so* target/ek/old/
#   (device) bash bench/device/eager_host_h200.sh target/ek
B=${1:-target/ek}
. "$(dirname "$0")/lib.sh"
layer_checks_setup
export CUDA_VISIBLE_DEVICES=0
{
  for graphs in 0 1; do
    for w in 4096x7168 2064x1000; do
      SYMM_CUDA_GRAPHS=$graphs SYMM_MATMUL=generated run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,2,16,17,128
      SYMM_CUDA_GRAPHS=$graphs run py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens 1,16,17
    done
    SYMM_CUDA_GRAPHS=$graphs dec_py dec_4096x2048x7168 4096x2048x7168 --tokens 1,16,17,128
    SYMM_CUDA_GRAPHS=$graphs run tp_py 2 "$L/libdec_tp2_4096x2048x7168.so" 4096 7168 --decoder 2048 --tokens 1,16,17
    SYMM_CUDA_GRAPHS=$graphs run tp_py 2 "$L/libmlp_tp2_2064x1000.so" 2064 1000 --tokens 1,16,17
  done
} 2>&1 | grep -v Warning | tee "$OUT/checks.log"
tally checks "$OUT/checks.log"
for round in 1 2 3; do
  for side in old layers; do
    for layer in "libmlp_4096x7168.so 4096 7168" "libdec_4096x2048x7168.so 4096 7168 --decoder 2048"; do
      set -- $layer
      lib=$1
      shift
      SYMM_CUDA_GRAPHS=0 SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$B/$side/libsymm_runtime.so PYTHONPATH=python:bench/model \
        timeout 120 "$B/symm-launch" -n 1 python3 bench/model/eager_host.py "$B/$side/$lib" "$@" --label "$side" 2>&1 | grep '{"label\|rror'
    done
  done
done | tee "$OUT/host.log"
