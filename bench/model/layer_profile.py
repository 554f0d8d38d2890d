"""Where the time of the Llama TP MLP block goes, per kernel: the compiled
block (through the symm package) and torch's best variants at the same
token counts, each called eagerly and captured into a CUDA graph, under
torch.profiler (CUPTI sees every kernel of the process, ours included).
Rank 0 prints, per variant and token count, the wall time per layer call
and the part of it no kernel ran, then each kernel's name, calls per layer
call and µs per layer call.

    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python \\
      torchrun --nproc_per_node=2 bench/model/layer_profile.py build/layers/libllama_mlp.so
"""

import itertools
import os
import sys
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
from torch.profiler import ProfilerActivity, profile, schedule

import llama_tp
import symm
from layer_bench import graph_of
from llama_tp import D

CALLS = 20


def calls(fn, graphed):
    """A function making CALLS calls of fn: one after another, or by one
    replay of a CUDA graph captured from them."""
    if not graphed:
        def run():
            for _ in range(CALLS):
                fn()
        return run
    return graph_of(fn, CALLS).replay


def kernel_times(prof):
    """From a torch.profiler run: µs per kernel name, launches per name, and
    the sorted (start, end) spans of every kernel."""
    totals, counts = defaultdict(float), defaultdict(int)
    spans = []
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA:
            totals[event.name] += event.device_time
            counts[event.name] += 1
            spans.append((event.time_range.start, event.time_range.end))
    spans.sort()
    return totals, counts, spans


def host_barrier(key):
    """Waits until every rank reached this point, through the process
    group's store: no GPU work, so nothing shows up in a profile."""
    store = dist.distributed_c10d._get_default_store()
    world = dist.get_world_size()
    store.add(f"layer_profile/{key}", 1)
    while int(store.add(f"layer_profile/{key}", 0)) < world:
        pass


def main():
    s = llama_tp.setup()
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, sys.argv[1], "llama_mlp")

    # PROFILE_TOKENS=1,16 picks the token counts (default 1 and 2048).
    tokens = [int(t) for t in os.environ.get("PROFILE_TOKENS", "1,2048").split(",")]
    for m in tokens:
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

        for (name, fn), graphed in itertools.product(
            (("symm", ours), ("torch one-shot", torch_one_shot),
             ("torch two-shot", torch_two_shot)),
            (False, True),
        ):
            run = calls(fn, graphed)
            name += " in a CUDA graph" if graphed else " eager"
            for _ in range(3):
                run()
            torch.cuda.synchronize()
            dist.barrier()
            # The profiler starts in its own time on each rank, and its first
            # traced kernels run late: a first (warm-up) step is traced and
            # dropped, and each step starts with the ranks lined up on the
            # CPU only (no kernel of the barrier's own). Otherwise a late rank
            # shows up as all-reduce time on the other.
            traced = []
            with profile(
                activities=[ProfilerActivity.CUDA],
                schedule=schedule(wait=0, warmup=1, active=1),
                on_trace_ready=lambda prof: traced.append(kernel_times(prof)),
            ) as prof:
                for step in range(2):
                    host_barrier(f"{m}/{name}/{step}")
                    run()
                    torch.cuda.synchronize()
                    prof.step()
            totals, counts, spans = traced[-1]
            # Wall time from the first kernel's start to the last one's end,
            # and the part of it no kernel ran (launch gaps, host waits).
            busy, reach = 0.0, None
            for start, end in spans:
                if reach is None or start > reach:
                    busy += end - start
                    reach = end
                elif end > reach:
                    busy += end - reach
                    reach = end
            wall = spans[-1][1] - spans[0][0] if spans else 0.0
            if s.rank == 0:
                total = sum(totals.values()) / CALLS
                print(f"== M={m} {name}: {total:.1f} us of kernels per call, "
                      f"{wall / CALLS:.1f} us wall, {(wall - busy) / CALLS:.1f} us idle",
                      flush=True)
                for kernel, us in sorted(totals.items(), key=lambda kv: -kv[1]):
                    print(f"  {us / CALLS:8.1f} us  x{counts[kernel] / CALLS:.0f}  {kernel[:110]}",
                          flush=True)
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
