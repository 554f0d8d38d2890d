"""Where the time of the Llama TP MLP block goes, per kernel: the compiled
block (through the symm package) and torch's best variants at the same
token counts, under torch.profiler (CUPTI sees every kernel of the
process, ours included). Rank 0 prints, per variant and token count, each
kernel's name, calls per layer call and µs per layer call.

    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \\
      torchrun --nproc_per_node=2 bench/model/layer_profile.py build/layers/libllama_mlp.so
"""

import os
import sys
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
from torch.profiler import ProfilerActivity, profile

import symm

D, F, EPS = 4096, 14336, 1e-5
CALLS = 20


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    device = torch.device("cuda", torch.cuda.current_device())
    group = dist.group.WORLD.group_name
    shard = F // world
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    cols = slice(rank * shard, (rank + 1) * shard)
    w_gate = normal(D, F, std=D**-0.5)[:, cols].contiguous()
    w_up = normal(D, F, std=D**-0.5)[:, cols].contiguous()
    w_down = normal(F, D, std=F**-0.5)[cols].contiguous()
    w_gate_up = torch.cat([w_gate, w_up], dim=1).contiguous()
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, sys.argv[1], "llama_mlp")

    for m in (1, 2048):
        x = normal(m, D, std=1.0)
        out = torch.empty_like(x)
        buf = symm_mem.empty((m, D), dtype=torch.bfloat16, device=device)
        symm_mem.rendezvous(buf, group)

        def torch_one_shot():
            xn = torch.nn.functional.rms_norm(x, (D,), norm, EPS)
            gu = xn @ w_gate_up
            torch.mm(torch.nn.functional.silu(gu[:, :shard]) * gu[:, shard:], w_down, out=buf)
            return x + torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", group)

        def torch_two_shot():
            xn = torch.nn.functional.rms_norm(x, (D,), norm, EPS)
            gu = xn @ w_gate_up
            torch.mm(torch.nn.functional.silu(gu[:, :shard]) * gu[:, shard:], w_down, out=buf)
            torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", group)
            return x + buf

        def ours():
            layer(m, x, norm, w_gate, w_up, w_down, out)

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
            if rank == 0:
                total = sum(totals.values()) / CALLS
                print(f"== M={m} {name}: {total:.1f} us of kernels per call", flush=True)
                for kernel, us in sorted(totals.items(), key=lambda kv: -kv[1]):
                    print(f"  {us / CALLS:8.1f} us  x{counts[kernel] / CALLS:.0f}  {kernel[:110]}",
                          flush=True)
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
