"""The compiled Llama-3-8B MLP block as a torch custom op inside a small
torch model (embedding -> the symm MLP block -> a final RMSNorm), under
torch.compile(fullgraph=True, mode="reduce-overhead"): no graph break, the
whole model in CUDA graphs. Checked against torch's f32 reference of the
unsharded block, and timed beside the same model in pure torch under the
same torch.compile.

    # here: compile and link (world size W; the device has no symm-compile)
    python/build_layer.sh examples/llama_mlp.mlir build/layers   # or a world-1 copy
    # on the GPU machine, one process per rank:
    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python \\
        symm-launch -n W [--gpus 1] python3 python/examples/torch_compile_mlp.py \\
        build/layers/libllama_mlp.so build/layers/llama_mlp.json

Every rank draws the full weights alike and keeps its shard (gate and up
columns, down rows), so the reference needs no communication. With a GPU
per rank the pure-torch model (its all-reduce torch's functional NCCL
collective, which torch.compile traces) is checked and timed too: the wall
time per call (which, for a CUDA-graph replay driven from Python, is
mostly the CPU's) and the GPU time per call (the kernels' total in a
profile; with several ranks it includes the time a collective waits for
its peer). Ranks sharing a GPU only check. Exit status 1 if a check
fails. TOKENS=1,16 picks the token counts.
"""

import os
import sys

import torch

import symm

D, EPS, VOCAB = 4096, 1e-5, 1024
TOKENS = [int(t) for t in os.environ.get("TOKENS", "1,16,128").split(",")]
ITERS, WARMUP = 100, 20


def rmsnorm(x, weight):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * weight.float()).to(x.dtype)


class SymmModel(torch.nn.Module):
    def __init__(self, layer, embedding, norm, gate, up, down, final_norm):
        super().__init__()
        self.layer = layer
        self.embedding, self.norm, self.final_norm = embedding, norm, final_norm
        self.gate, self.up, self.down = gate, up, down

    def forward(self, ids):
        x = self.embedding[ids]
        out = torch.empty_like(x)
        self.layer.llama_mlp(x, self.norm, self.gate, self.up, self.down, out)
        return rmsnorm(out, self.final_norm)


class TorchModel(torch.nn.Module):
    """The same model in torch: its shard of the block, the partial sums
    all-reduced by NCCL (torch's functional collective, which
    torch.compile traces) when there are several ranks."""

    def __init__(self, embedding, norm, gate, up, down, final_norm, group=None):
        super().__init__()
        self.embedding, self.norm, self.final_norm = embedding, norm, final_norm
        self.gate, self.up, self.down = gate, up, down
        self.group = group

    def forward(self, ids):
        x = self.embedding[ids]
        h = rmsnorm(x, self.norm)
        partial = (torch.nn.functional.silu(h @ self.gate) * (h @ self.up)) @ self.down
        if self.group is not None:
            import torch.distributed._functional_collectives as funcol

            partial = funcol.all_reduce(partial, "sum", self.group)
        return rmsnorm(x + partial, self.final_norm)


def reference(ids, embedding, norm, gate, up, down, final_norm):
    """The unsharded block in f32 (bf16 inputs), then the final norm."""
    x = embedding[ids].float()
    h = rmsnorm(x, norm).float()
    out = (x + (torch.nn.functional.silu(h @ gate.float()) * (h @ up.float())) @ down.float())
    return rmsnorm(out.to(torch.bfloat16), final_norm).float()


def gpu_us(run, arg, calls=20):
    """GPU time per call: the kernels' total in a profile of `calls` calls
    (the wall time per call of a CUDA-graph replay from Python can be the
    CPU's, not the GPU's)."""
    run(arg)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            run(arg)
        torch.cuda.synchronize()
    total = sum(e.self_device_time_total for e in prof.key_averages())
    return total / calls


def time_us(run, arg):
    for _ in range(WARMUP):
        run(arg)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(ITERS):
        run(arg)
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / ITERS


def main():
    library, signature = sys.argv[1], sys.argv[2]
    rank = int(os.environ.get("RANK", 0))
    world = int(os.environ.get("WORLD_SIZE", 1))
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", 0)))
    # One GPU per rank: the torch model all-reduces through NCCL and both
    # are timed. Ranks sharing a GPU only check (NCCL refuses them).
    own_gpus = torch.cuda.device_count() >= world
    group = None
    if world > 1 and own_gpus:
        import torch.distributed as dist

        dist.init_process_group("nccl", device_id=torch.device("cuda", torch.cuda.current_device()))
        group = dist.group.WORLD
    layer = symm.load(library, signature)
    shard = layer.llama_mlp.spec.args[2].shape[1]
    F = shard * world
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    embedding = normal(VOCAB, D, std=1.0)
    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    final_norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    gate, up, down = normal(D, F, std=D**-0.5), normal(D, F, std=D**-0.5), normal(F, D, std=F**-0.5)
    columns = slice(rank * shard, (rank + 1) * shard)
    mine = (gate[:, columns].contiguous(), up[:, columns].contiguous(), down[columns].contiguous())

    torch._dynamo.config.cache_size_limit = 64
    ours = torch.compile(
        SymmModel(layer, embedding, norm, *mine, final_norm),
        fullgraph=True, mode="reduce-overhead",
    )
    theirs = torch.compile(
        TorchModel(embedding, norm, *mine, final_norm, group), fullgraph=True, mode="reduce-overhead"
    )
    timed = world == 1 or own_gpus
    failed = False
    for m in TOKENS:
        ids = torch.randint(0, VOCAB, (m,), generator=g, device="cuda")
        for _ in range(3):  # warm-up runs, then CUDA-graph recording and replay
            got = ours(ids).float().clone()
        want = reference(ids, embedding, norm, gate, up, down, final_norm)
        error = ((got - want).norm() / want.norm()).item()
        ok = error < 2e-2
        failed |= not ok
        line = f"{'PASS' if ok else 'FAIL'} rank {rank} M={m}: rel L2 vs torch's f32 reference {error:.2e}"
        if timed:
            for _ in range(3):
                theirs_out = theirs(ids).float().clone()
            torch_error = ((theirs_out - want).norm() / want.norm()).item()
            t_ours, t_theirs = time_us(ours, ids), time_us(theirs, ids)
            g_ours, g_theirs = gpu_us(ours, ids), gpu_us(theirs, ids)
            line += (
                f" (torch.compile model {torch_error:.2e}); per call, both torch.compile "
                f"reduce-overhead: wall symm {t_ours:.1f} us, torch {t_theirs:.1f} us "
                f"({t_theirs / t_ours:.2f}x); GPU symm {g_ours:.1f} us, torch {g_theirs:.1f} us "
                f"({g_theirs / g_ours:.2f}x)"
            )
        print(line, flush=True)
    skips = dict(torch._dynamo.utils.counters["inductor"])
    skips = {k: v for k, v in skips.items() if "cudagraph" in k}
    print(f"rank {rank}: inductor's CUDA-graph counters {skips}", flush=True)
    if os.environ.get("PROFILE") and timed:
        for model, name in ((ours, "symm"), (theirs, "torch")):
            ids = torch.randint(0, VOCAB, (16,), generator=g, device="cuda")
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                for _ in range(10):
                    model(ids)
                torch.cuda.synchronize()
            print(f"== {name} model, M=16, 10 calls", flush=True)
            print(prof.key_averages().table(sort_by="cuda_time_total", row_limit=12), flush=True)
    graphs = torch._dynamo.utils.counters["stats"]["unique_graphs"]
    print(f"rank {rank}: torch.compile made {graphs} graphs for {2 * len(TOKENS)} shapes "
          "(fullgraph: no graph break)", flush=True)
    torch.cuda.synchronize()
    symm.runtime().close()
    if group is not None:
        # torch 2.11's destroy_process_group hangs once the torch model's
        # all-reduce sits in a CUDA graph of cudagraph trees (measured on 2x
        # H200; a plain NCCL all-reduce destroys fine): the process ends
        # without it.
        sys.stdout.flush()
        os._exit(1 if failed else 0)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
