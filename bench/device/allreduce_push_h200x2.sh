#!/bin/bash
# Issue 5: push two-shot (grid <= 132) checks, NVLink ceiling probe, allreduce bench beside the torch anchor.
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$(python3 -c "import nvidia, glob, os; print(':'.join(glob.glob(os.path.join(nvidia.__path__[0], '*', 'lib'))))" 2>/dev/null):$PWD
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1
{ date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nvidia-smi nvlink --status -i 0 | grep -c "26.562 GB/s" | sed 's/^/NVLinks at 26.562 GB\/s on GPU 0: /'; } | tee $OUT/env.txt
echo "== gpu tests"; ./symm-launch -n 2 ./symm-gpu-tests 2>&1 | tee $OUT/gpu-tests.log
echo "== gpu tests (threads)"; ./symm-gpu-tests --threads 2 2>&1 | grep -E "all-reduce|passed"
echo "== peer probe"; ./symm-launch -n 2 ./symm-peer-probe 2>&1 | tee $OUT/probe.log | tail -25
for i in 1 2; do
echo "== allreduce bench $i"; ./symm-launch -n 2 ./symm-allreduce-bench 2>&1 | sed 's/^\[rank 0\] //' > $OUT/symm$i.jsonl; echo rc=$?
echo "== torch anchor $i"; torchrun --nproc_per_node=2 anchors/torch_allreduce_bench.py 2>/dev/null > $OUT/torch$i.jsonl; echo rc=$?
done
grep -v rmsnorm $OUT/symm1.jsonl | tail -3
