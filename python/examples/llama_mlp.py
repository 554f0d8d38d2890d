"""The compiled Llama-3-8B MLP block (examples/llama_mlp.mlir: RMSNorm,
gate and up projections, SiLU, down projection, all-reduce, residual; bf16,
2-way tensor parallel) called from PyTorch through the symm package, beside
the same block in torch (NCCL all-reduce), on the same GPUs:

    python/build_layer.sh examples/llama_mlp.mlir build/layers
    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python \
        torchrun --nproc_per_node=2 python/examples/llama_mlp.py build/layers/libllama_mlp.so

For each token count: the relative L2 difference between the two outputs
(both bf16 end to end, so about 1e-2 at most), then the time per call of
each, eager on torch's current stream, and their ratio. Exit status 1 if
an output is off.
"""

import os
import sys

import torch
import torch.distributed as dist

import symm

D, F, EPS = 4096, 14336, 1e-5
TOKENS = [1, 16, 128, 2048]
ITERS, WARMUP = 50, 10


def rmsnorm(x, weight):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * weight.float()).to(x.dtype)


def torch_layer(x, norm, w_gate, w_up, w_down):
    xn = rmsnorm(x, norm)
    partial = (torch.nn.functional.silu(xn @ w_gate) * (xn @ w_up)) @ w_down
    dist.all_reduce(partial)
    return x + partial


def time_us(run):
    for _ in range(WARMUP):
        run()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    dist.barrier()
    start.record()
    for _ in range(ITERS):
        run()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000 / ITERS


def main():
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    shard = F // world
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    # Every rank draws the full weights alike and keeps its shard.
    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    w_gate = normal(D, F, std=D**-0.5)[:, rank * shard:(rank + 1) * shard].contiguous()
    w_up = normal(D, F, std=D**-0.5)[:, rank * shard:(rank + 1) * shard].contiguous()
    w_down = normal(F, D, std=F**-0.5)[rank * shard:(rank + 1) * shard].contiguous()

    runtime = symm.Runtime()
    layer = symm.Layer(runtime, sys.argv[1], "llama_mlp")
    failed = False
    for m in TOKENS:
        x = normal(m, D, std=1.0)
        out = torch.empty_like(x)
        layer(m, x, norm, w_gate, w_up, w_down, out)
        want = torch_layer(x, norm, w_gate, w_up, w_down)
        torch.cuda.synchronize()
        error = ((out.float() - want.float()).norm() / want.float().norm()).item()
        ok = error < 2e-2
        failed |= not ok
        ours = time_us(lambda: layer(m, x, norm, w_gate, w_up, w_down, out))
        theirs = time_us(lambda: torch_layer(x, norm, w_gate, w_up, w_down))
        if rank == 0:
            print(
                f"{'PASS' if ok else 'FAIL'} M={m}: rel L2 vs the torch layer {error:.2e}; "
                f"per call: symm {ours:.1f} us, torch (NCCL) {theirs:.1f} us, "
                f"torch / symm {theirs / ours:.2f}x",
                flush=True,
            )
    runtime.close()
    dist.destroy_process_group()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
