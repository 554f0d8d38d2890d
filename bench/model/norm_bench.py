"""The all-reduce + residual + RMSNorm of a Llama-3-8B TP attention output
block (examples/llama_attn_out.mlir: o_proj GEMM, all-reduce, residual add,
RMSNorm; bf16, D 4096) compiled with the row statistic fused into the
all-reduce (symm_mem.all_reduce_rows_out) and without (--no-fuse-rows: the
all-reduce with the residual in its epilogue, then the compiler's RMSNorm
row kernel), beside torch's best variants on the same GPUs, one process
per GPU:

    SYMM_RUNTIME_LIB=.../libsymm_runtime.so PYTHONPATH=python:bench/model \\
      torchrun --nproc_per_node=2 bench/model/norm_bench.py FUSED.so UNFUSED.so

For each token count (NORM_TOKENS, default 1 to 4096) on rank 0, one JSON
line: µs per call of the whole block (CUDA events, 200 calls after 50; ours
through the async entry point, called from Python per layer call (its own
CUDA graph) and captured into a torch CUDA graph of 10 calls as torch's
variants are: the block is short enough that the Python call per layer
bounds the first), and, from torch.profiler over one replay of a graph of
20 calls, µs per call of every kernel but the GEMM (what the fusion
changes: the all-reduce and the norm). Outputs of both
builds are checked against torch's first (relative L2 of the residual
stream and of the normalized output).
"""

import json
import os
import sys
from collections import defaultdict

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem
from torch.profiler import ProfilerActivity, profile

import symm
from layer_bench import bench, graph_of, rel_l2
from llama_tp import D, EPS

TOKENS = [int(m) for m in os.environ.get("NORM_TOKENS", "1,16,128,256,512,1024,2048,4096").split(",")]
ATTN = 4096  # attention width; each rank holds ATTN / world of w_o's rows
PROFILED = 20


def gemm(name):
    return any(tag in name for tag in ("nvjet", "gemm", "cutlass", "xmma", "splitK"))


def other_kernels_us(fn):
    """µs per call of fn's kernels other than GEMMs (torch.profiler/CUPTI),
    over one replay of a CUDA graph of PROFILED calls, so that no host
    launch gap between the ranks shows up as a collective's wait."""
    graph = graph_of(fn, PROFILED, warmup=5)
    graph.replay()
    torch.cuda.synchronize()
    dist.barrier()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        graph.replay()
        torch.cuda.synchronize()
    totals = defaultdict(float)
    for event in prof.events():
        if event.device_type == torch.autograd.DeviceType.CUDA and not gemm(event.name):
            totals[event.name] += event.device_time
    return sum(totals.values()) / PROFILED, {k: v / PROFILED for k, v in totals.items()}


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    device = torch.device("cuda", torch.cuda.current_device())
    group = dist.group.WORLD.group_name
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    shard = ATTN // world
    w_o = normal(ATTN, D, std=ATTN**-0.5)[rank * shard:(rank + 1) * shard].contiguous()
    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    runtime = symm.Runtime()
    fused = symm.Layer(runtime, sys.argv[1], "llama_attn_out")
    unfused = symm.Layer(runtime, sys.argv[2], "llama_attn_out")
    # Optional: the fused build with every size on the one-shot.
    one_shot = symm.Layer(runtime, sys.argv[3], "llama_attn_out") if len(sys.argv) > 3 else None

    for m in TOKENS:
        attn = normal(m, ATTN, std=1.0)[:, rank * shard:(rank + 1) * shard].contiguous()
        res_in = normal(m, D, std=1.0)
        outs = {name: (torch.empty_like(res_in), torch.empty_like(res_in))
                for name in ("fused", "unfused", "one_shot")}
        buf = symm_mem.empty((m, D), dtype=torch.bfloat16, device=device)
        symm_mem.rendezvous(buf, group)

        def ours(layer, name):
            res, normed = outs[name]
            return lambda: layer(m, attn, w_o, res_in, norm, res, normed)

        def torch_nccl():
            partial = attn @ w_o
            dist.all_reduce(partial)
            h = partial + res_in
            return h, torch.nn.functional.rms_norm(h, (D,), norm, EPS)

        def torch_one_shot():
            torch.mm(attn, w_o, out=buf)
            h = torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", group) + res_in
            return h, torch.nn.functional.rms_norm(h, (D,), norm, EPS)

        def torch_two_shot():
            torch.mm(attn, w_o, out=buf)
            torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", group)
            h = buf + res_in
            return h, torch.nn.functional.rms_norm(h, (D,), norm, EPS)

        h_ref, n_ref = torch_nccl()
        errors = {}
        builds = [("fused", fused), ("unfused", unfused)] + ([("one_shot", one_shot)] if one_shot else [])
        for name, layer in builds:
            ours(layer, name)()
            torch.cuda.synchronize()
            res, normed = outs[name]
            errors[name] = (rel_l2(res, h_ref), rel_l2(normed, n_ref))
            if max(errors[name]) > 2e-2:
                raise SystemExit(f"M={m} {name}: relative L2 {errors[name]} against torch")

        times = {
            "symm_fused": bench(ours(fused, "fused"), graph=False),
            "symm_unfused": bench(ours(unfused, "unfused"), graph=False),
            "symm_fused_cg": bench(ours(fused, "fused"), graph=True),
            "symm_unfused_cg": bench(ours(unfused, "unfused"), graph=True),
            "torch_nccl_cg": bench(torch_nccl, graph=True),
            "torch_one_shot_cg": bench(torch_one_shot, graph=True),
            "torch_two_shot_cg": bench(torch_two_shot, graph=True),
        }
        kernels = {
            "symm_fused": other_kernels_us(ours(fused, "fused")),
            "symm_unfused": other_kernels_us(ours(unfused, "unfused")),
            "torch_two_shot": other_kernels_us(torch_two_shot),
            "torch_one_shot": other_kernels_us(torch_one_shot),
        }
        if one_shot:
            times["symm_fused_one_shot_cg"] = bench(ours(one_shot, "one_shot"), graph=True)
            kernels["symm_fused_one_shot"] = other_kernels_us(ours(one_shot, "one_shot"))
        torch_best = min(v for k, v in times.items() if k.startswith("torch"))
        ours_best = min(times["symm_fused"], times["symm_fused_cg"])
        if rank == 0:
            print(json.dumps({
                "M": m,
                "layer_us": {k: round(v, 2) for k, v in times.items()},
                "torch_best_us": round(torch_best, 2),
                "unfused_over_fused_cg": round(times["symm_unfused_cg"] / times["symm_fused_cg"], 3),
                "torch_best_over_fused": round(torch_best / ours_best, 3),
                "non_gemm_kernel_us": {k: round(v[0], 2) for k, v in kernels.items()},
                "non_gemm_unfused_over_fused": round(
                    kernels["symm_unfused"][0] / kernels["symm_fused"][0], 3),
                "kernels": {k: {n[:60]: round(t, 2) for n, t in v[1].items()} for k, v in kernels.items()},
                "rel_l2_residual_normed": errors,
            }), flush=True)
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
