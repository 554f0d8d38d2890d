#!/bin/bash
# Compiled functions as CUDA graphs (capture on the 2nd call with the same arguments, replay after).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$(python3 -c "import nvidia, glob, os; print(':'.join(glob.glob(os.path.join(nvidia.__path__[0], '*', 'lib'))))" 2>/dev/null):$PWD
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "== tp_mlp (graphs by default)"; ./symm-launch -n 2 ./tp_mlp
echo "== tp_mlp, SYMM_CUDA_GRAPHS=0"; SYMM_CUDA_GRAPHS=0 ./symm-launch -n 2 ./tp_mlp
echo "== tp_mlp compiled --no-cuda-graphs"; ./symm-launch -n 2 ./tp_mlp_nographs
echo "== tp_mlp Rust (graphs)"; ./symm-launch -n 2 ./tp_mlp_rust
echo "== tp_mlp large (graphs)"; ./symm-launch -n 2 ./tp_mlp_large
echo "== compiled all-reduce (graphs)"; ./symm-launch -n 2 ./compiled_ar_auto
echo "== compiled all-reduce, SYMM_CUDA_GRAPHS=0"; SYMM_CUDA_GRAPHS=0 ./symm-launch -n 2 ./compiled_ar_auto
echo "== dead peer"; ./symm-launch -n 2 ./symm-gpu-tests dead-peer
} 2>&1 | tee $OUT/graphs.log
