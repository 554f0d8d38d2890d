"""Where the time of the Llama TP MLP block goes, per kernel: the compiled
block (through the symm package) and torch's best variants at the same
token counts, under torch.profiler (CUPTI sees every kernel of the
process, ours included). Rank 0 prints, per variant and token count, each
kernel's name, calls per layer call and µs per layer call.

    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python \\
      torchrun --nproc_per_node=2 bench/model/layer_profile.py build/layers/libllama_mlp.so
"""

import sys
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
from torch.profiler import ProfilerActivity, profile

import llama_tp
import symm
from llama_tp import D

CALLS = 20


def main():
    s = llama_tp.setup()
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, sys.argv[1], "llama_mlp")

    for m in (1, 2048):
        x = s.normal(m, D, std=1.0)
        out = torch.empty_like(x)
        buf = symm_mem.empty((m, D), dtype=torch.bfloat16, device=s.device)
        symm_mem.rendezvous(buf, s.group)

        def torch_one_shot():
            return llama_tp.one_shot(s, x, buf, fused=True)

        def torch_two_shot():
            return llama_tp.two_shot(s, x, buf, fused=True)

        def ours():
            layer(m, x, s.norm, s.w_gate, s.w_up, s.w_down, out)

        for name, fn in (("symm", ours), ("torch one-shot", torch_one_shot),
                         ("torch two-shot", torch_two_shot)):
            for _ in range(5):
                fn()
            torch.cuda.synchronize()
            dist.barrier()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                for _ in range(CALLS):
                    fn()
                torch.cuda.synchronize()
            totals, counts = defaultdict(float), defaultdict(int)
            for event in prof.events():
                if event.device_type == torch.autograd.DeviceType.CUDA:
                    totals[event.name] += event.device_time
                    counts[event.name] += 1
            if s.rank == 0:
                total = sum(totals.values()) / CALLS
                print(f"== M={m} {name}: {total:.1f} us of kernels per call", flush=True)
                for kernel, us in sorted(totals.items(), key=lambda kv: -kv[1]):
                    print(f"  {us / CALLS:8.1f} us  x{counts[kernel] / CALLS:.0f}  {kernel[:110]}",
                          flush=True)
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
