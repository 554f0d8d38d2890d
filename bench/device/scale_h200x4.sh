#!/bin/bash
# Issue 7 on nvidia-h200-x4: correctness at 4 ranks, then bench/allreduce beside the torch anchor,
# all-gather + matmul beside its anchor, compiled tp_mlp (world 4) and compiled all-reduce (world 4).
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$(python3 -c "import nvidia, glob, os; print(':'.join(glob.glob(os.path.join(nvidia.__path__[0], '*', 'lib'))))" 2>/dev/null):$PWD
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi topo -m | head -6; } 2>&1 | tee $OUT/env.txt
echo "== gpu tests, 4 processes"; timeout 150 ./symm-launch -n 4 ./symm-gpu-tests 2>&1 | tee $OUT/gpu-tests.log | grep -E "FAIL|passed|all-reduce:"
echo "== allreduce bench"; ./symm-launch -n 4 ./symm-allreduce-bench 2>&1 | sed 's/^\[rank 0\] //' | tee $OUT/symm.jsonl | grep numel | tail -3
echo "== torch anchor"; torchrun --nproc_per_node=4 anchors/torch_allreduce_bench.py 2>/dev/null | tee $OUT/torch.jsonl | tail -2
echo "== agmm"; ./symm-launch -n 4 ./symm-agmm-bench 2>&1 | tee $OUT/agmm_symm.log | tail -4
echo "== torch agmm anchor"; torchrun --nproc_per_node=4 anchors/torch_agmm_bench.py 2>/dev/null | tee $OUT/agmm_torch.jsonl | tail -3
echo "== tp_mlp world 4"; ./symm-launch -n 4 ./tp_mlp_w4 2>&1 | tee $OUT/tp_mlp.log
echo "== compiled all-reduce world 4"; ./symm-launch -n 4 ./compiled_ar_w4 2>&1 | sed 's/^\[rank 0\] //' | tee $OUT/compiled.jsonl | tail -3
