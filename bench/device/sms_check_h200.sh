#!/usr/bin/env bash
# Issue 32, session 39 (one H200): the runtime's check of the SM count a
# program was compiled for (symm-compile --sms; symm_rt_check_sms) against
# the GPU's, the committed build's sanitizer runs at 2064/1000 with every
# kernel instrumented, and the C++ apps. Build:
#   WIDTHS="4096x7168 2064x1000" LAYER_FLAGS="--chip sm_90a" bench/device/matmul_build.sh target/sm
#   then examples/llama_mlp.mlir at world size 1 compiled with --chip sm_90a --sms 114
#   as target/sm/layers/libmlp114_4096x7168.so, and the apps as target/sm/apps.tar.xz.
# PARTS: sms sanitize apps
#   bash bench/device/sms_check_h200.sh target/sm
B=${1:-target/sm}
ALL_PARTS="sms sanitize apps"
. "$(dirname "$0")/lib.sh"
single_gpu_setup
if part sms; then
  {
    nvidia-smi --query-gpu=name,count --format=csv,noheader
    # Compiled for this GPU's 132 SMs: nothing to say.
    run py "$L/libmlp_4096x7168.so" 4096 7168 --tokens 1,9,16
    # Compiled for 114 (H100 PCIe): one warning, then the same results.
    run py "$L/libmlp114_4096x7168.so" 4096 7168 --tokens 1,9,16
  } 2>&1 | grep -v Warning | tee "$OUT/sms.log"
  echo "warnings naming --sms: $(grep -c 'recompile with --sms 132' "$OUT/sms.log")"
  tally sms "$OUT/sms.log"
fi
if part sanitize; then
  # Every kernel instrumented: at 2064/1000 the down projection is cuBLAS's,
  # and a filter that leaves it out makes racecheck itself fault.
  for tool in racecheck memcheck; do
    SYMM_MATMUL=generated SYMM_RUNTIME_LIB=$L/libsymm_runtime.so PYTHONPATH=python:bench/model \
      run timeout 200 compute-sanitizer --tool $tool --target-processes all \
      "$B/symm-launch" -n 1 python3 bench/model/matmul_check.py "$L/libmlp_2064x1000.so" 2064 1000 --tokens 2,9,16
  done 2>&1 | grep -v Warning | tee "$OUT/sanitize.log"
  grep -E "ERROR SUMMARY|RACECHECK SUMMARY|Internal|exit status" "$OUT/sanitize.log"
fi
if part apps; then
  apps_checks 1,9,16,17 1,16,17 2>&1 | grep -v Warning | tee "$OUT/apps.log"
  tally apps "$OUT/apps.log"
fi
