"""Where the time of the Llama TP MLP block (or, with PROFILE_BLOCK=decoder,
the decoder half-layer) goes, per kernel: the compiled block (through the
symm package), torch's two-shot variant, each called eagerly and captured
into a CUDA graph, and torch.compile (Inductor) in a CUDA graph, at the same
token counts, under torch.profiler (CUPTI sees every kernel of the process,
ours included).
Rank 0 prints, per variant and token count, the wall time per layer call
and the part of it no kernel ran, then each kernel's name, calls per layer
call and µs per layer call.

    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python \\
      torchrun --nproc_per_node=2 bench/model/layer_profile.py build/layers/libllama_mlp.so
    PROFILE_BLOCK=decoder ... layer_profile.py build/layers/libllama_decoder.so

LAYER_WEIGHT_COPIES=N rotates N copies of the weights on every side, as in
bench/model/layer_bench.py.
"""

import itertools
import os
import sys
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
from torch.profiler import ProfilerActivity, profile, schedule

import decoder_bench
import llama_tp
import symm
from layer_bench import compiled_variant, graph_of, in_turn
from llama_tp import D

# 20 calls, or the least multiple of the weight copies' count above it.
CALLS = -(-20 // llama_tp.weight_copy_count()) * llama_tp.weight_copy_count()


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


def wall_and_idle(spans):
    """From sorted (start, end) kernel spans: the wall time from the first
    kernel's start to the last one's end, and the part of it no kernel ran
    (launch gaps, host waits)."""
    busy, reach = 0.0, None
    for start, end in spans:
        if reach is None or start > reach:
            busy += end - start
            reach = end
        elif end > reach:
            busy += end - reach
            reach = end
    wall = reach - spans[0][0] if spans else 0.0
    return wall, wall - busy


def host_barrier(key):
    """Waits until every rank reached this point, through the process
    group's store: no GPU work, so nothing shows up in a profile."""
    store = dist.distributed_c10d._get_default_store()
    world = dist.get_world_size()
    store.add(f"layer_profile/{key}", 1)
    while int(store.add(f"layer_profile/{key}", 0)) < world:
        pass


def variants(s, block, layer, m):
    """(name, fn) of what is profiled at m tokens: the compiled `layer` and
    torch's variants of the same block: the decoder half-layer
    (examples/llama_decoder.mlir, as decoder_bench.py builds it) where
    `block` is "decoder", else the MLP block (examples/llama_mlp.mlir).
    Both include torch.compile (Inductor) of the two-shot variant, the
    anchor of issue 32's targets at 16 and 128 tokens
    (PROFILE_COMPILED=nccl,one_shot,two_shot names others)."""
    compiled_names = os.environ.get("PROFILE_COMPILED", "two_shot").split(",")
    buf = symm_mem.empty((m, D), dtype=torch.bfloat16, device=s.device)
    symm_mem.rendezvous(buf, s.group)
    x = s.normal(m, D, std=1.0)
    out = torch.empty_like(x)
    if block == "decoder":
        heads, s.w_o, s.next_norm = decoder_bench.attention_weights(s)
        copies, next_copy = llama_tp.weight_copies(s, extra=("w_o", "next_norm"))
        attn = s.normal(m, heads, std=1.0)
        normed = torch.empty_like(x)
        reduces = decoder_bench.reducers(s, buf)
        found = [
            ("symm", in_turn([lambda c=c: layer(m, attn, c.w_o, x, c.norm, c.w_gate, c.w_up,
                                                c.w_down, c.next_norm, out, normed)
                              for c in copies])),
            ("torch two-shot", lambda: decoder_bench.decoder(
                next_copy(), attn, x, reduces["two_shot"], True)),
        ]
        for name in compiled_names:
            compiled = decoder_bench.compiled_decoder(name)
            found.append((f"torch.compile {name.replace('_', '-')}",
                          lambda compiled=compiled, reduce=reduces[name]: compiled(
                              next_copy(), attn, x, reduce)))
        return found
    copies, next_copy = llama_tp.weight_copies(s)
    torch_fns = {
        "nccl": lambda c, fused: llama_tp.nccl(c, x, fused),
        "one_shot": lambda c, fused: llama_tp.one_shot(c, x, buf, fused),
        "two_shot": lambda c, fused: llama_tp.two_shot(c, x, buf, fused),
    }
    found = [
        ("symm", in_turn([lambda c=c: layer(m, x, c.norm, c.w_gate, c.w_up, c.w_down, out)
                          for c in copies])),
        ("torch two-shot", lambda: torch_fns["two_shot"](next_copy(), True)),
    ]
    for name in compiled_names:
        found.append((f"torch.compile {name.replace('_', '-')}",
                      compiled_variant(name, torch_fns[name], next_copy)))
    return found


def main():
    s = llama_tp.setup()
    runtime = symm.Runtime()
    block = os.environ.get("PROFILE_BLOCK", "mlp")
    entry = "llama_decoder" if block == "decoder" else "llama_mlp"
    layer = symm.Layer(runtime, sys.argv[1], entry)

    # PROFILE_TOKENS=1,16 picks the token counts (default 1 and 2048).
    tokens = [int(t) for t in os.environ.get("PROFILE_TOKENS", "1,2048").split(",")]
    for m in tokens:
        profiled = variants(s, block, layer, m)
        for (name, fn), graphed in itertools.product(profiled, (False, True)):
            # torch.compile's variants are measured (layer_bench.py) and
            # profiled in a CUDA graph only.
            if name.startswith("torch.compile") and not graphed:
                continue
            try:
                run = calls(fn, graphed)
                name += " in a CUDA graph" if graphed else " eager"
                for _ in range(3):
                    run()
                torch.cuda.synchronize()
            except Exception as error:  # a variant Inductor cannot compile is reported, not fatal
                if s.rank == 0:
                    print(f"== {block} M={m} {name}: {type(error).__name__}: {error}", flush=True)
                continue
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
                    host_barrier(f"{block}/{m}/{name}/{step}")
                    run()
                    torch.cuda.synchronize()
                    prof.step()
            totals, counts, spans = traced[-1]
            wall, idle = wall_and_idle(spans)
            if s.rank == 0:
                total = sum(totals.values()) / CALLS
                print(f"== {block} M={m} {name}: {total:.1f} us of kernels per call, "
                      f"{wall / CALLS:.1f} us wall, {idle / CALLS:.1f} us idle",
                      flush=True)
                for kernel, us in sorted(totals.items(), key=lambda kv: -kv[1]):
                    print(f"  {us / CALLS:8.1f} us  x{counts[kernel] / CALLS:.0f}  {kernel[:110]}",
                          flush=True)
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
