#!/bin/bash
# Final re-check of the session's state: runtime GPU tests (processes, threads, dead peer), compiled tp_mlp
# (C++ small/large, fused/unfused, Rust), ptxas, compiled all-reduce correctness.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$(python3 -c "import nvidia, glob, os; print(':'.join(glob.glob(os.path.join(nvidia.__path__[0], '*', 'lib'))))" 2>/dev/null):$PWD
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PTXAS=$(python3 -c "import triton, os; print(os.path.join(os.path.dirname(triton.__file__), 'backends/nvidia/bin/ptxas'))")
n=0; bad=0; for f in ptx/*.ptx; do n=$((n+1)); $PTXAS -arch=sm_90 $f -o /dev/null || { bad=$((bad+1)); echo "FAIL $f"; }; done; echo "ptxas: $n compiled PTX modules, $bad failed"
./symm-gpu-tests --dump-ptx /tmp/rptx >/dev/null; n=0; bad=0; for f in /tmp/rptx/*.ptx; do n=$((n+1)); $PTXAS -arch=sm_90 $f -o /dev/null || { bad=$((bad+1)); echo "FAIL $f"; }; done; echo "ptxas: $n runtime kernels, $bad failed"
echo "== gpu tests (processes)"; ./symm-launch -n 2 ./symm-gpu-tests
echo "== gpu tests (threads)"; ./symm-gpu-tests --threads 2 | grep -E "all-reduce|passed"
echo "== dead peer"; ./symm-launch -n 2 ./symm-gpu-tests dead-peer
for b in tp_mlp tp_mlp_unfused tp_mlp_rust tp_mlp_large tp_mlp_large_unf; do echo "== $b"; ./symm-launch -n 2 ./$b; done
echo "== compiled all-reduce"; ./symm-launch -n 2 ./compiled_ar_auto
} 2>&1 | tee $OUT/final.log
