#!/usr/bin/env bash
# compute-sanitizer on the generated matmul kernels of the layers that
# gemv_build.sh builds: memcheck and racecheck at 1 and 3 tokens (the
# GEMVs) and at 16 (the tensor-core kernels), forced to the generated way. The
# filter is kns=symm_matmul: kns=gemv would also instrument cuBLAS's own
# gemvx kernels (torch's f32 reference runs them), and racecheck then
# crashes ("failed to handle a hardware exception") in either way.
#   (device) bash bench/device/gemv_sanitizer.sh target/gv
B=${1:?usage: gemv_sanitizer.sh BUILD_DIR}
. "$(dirname "$0")/lib.sh"
L=$B/layers
check() { # tool way layer tokens
  local w=$3
  SYMM_MATMUL=$2 SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
    run timeout 240 compute-sanitizer --tool "$1" --kernel-name kns=symm_matmul "$B/symm-launch" -n 1 \
    python3 bench/model/matmul_check.py "$L/libmlp_$w.so" "${w%x*}" "${w#*x}" --tokens "$4"
}
for w in 2064x1000 5120x1728 4096x7168 3072x8192; do
  for tool in memcheck racecheck; do check $tool generated $w 1,3; done
done
for tool in memcheck racecheck; do check $tool generated 2064x1000 16; done
SYMM_CUDA_GRAPHS=0 check racecheck generated 2064x1000 1
