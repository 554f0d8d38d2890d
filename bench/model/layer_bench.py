"""The Llama-3-8B tensor-parallel MLP block (RMSNorm, gate and up
projections, SiLU, down projection, all-reduce, residual; bf16, D 4096,
F 14336) in torch's variants beside the compiled one (examples/llama_mlp.mlir
through the symm package), in one process per GPU, on the same GPUs:

  torch: all-reduce by NCCL, by symm_mem one-shot (the down projection
  writes into the symmetric buffer) or two-shot in place; gate and up as
  one GEMM (as serving engines do) or two; eager, or replayed from a CUDA
  graph of 10 calls.  symm: the compiled layer's async entry point (its
  own CUDA graph after the second call) on torch's current stream, the
  legacy default one passed as CU_STREAM_LEGACY; symm_cg: the same entry point
  captured 10 calls at a time into one of torch's CUDA graphs, like
  torch's graph variants (its output checked after the replays).

    python/build_layer.sh examples/llama_mlp.mlir build/layers
    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python \\
      torchrun --nproc_per_node=2 bench/model/layer_bench.py build/layers/libllama_mlp.so

More builds of the layer can follow as LABEL=PATH (each timed and
checked as `symm_LABEL_us`, e.g. one compiled with other all-reduce
limits); LAYER_TOKENS=1,16,... replaces the token counts; TORCH_VARIANTS=two_shot,...
keeps only those of torch's all-reduce variants (nccl, one_shot, two_shot;
the NCCL reference runs either way). LAYER_ORDER=symm_first times ours
before torch's variants at each token count instead of after them. LAYER_BLOCK=gelu
times the non-gated block of bench/model/gelu_mlp.mlir (entry gelu_mlp)
instead; LAYER_BLOCK=linear the block with nn.Linear-layout weights of
bench/model/linear_mlp.mlir (entry linear_mlp), torch's variants then
multiplying by the same n x k weights (F.linear). LAYER_WEIGHT_COPIES=N
(3 unless set) gives every variant, ours and torch's alike, N copies of the
weights taken in turn call after call (a CUDA graph then holds a multiple
of N calls), as a model's layers follow one another, so that no call finds
the weight lines of the call before it in L2 (llama_tp.weight_copies); 1
reproduces the figures before 2026-11-28.

One JSON line per token count on rank 0: every variant's µs per call
(CUDA events, 200 calls after 50), torch's best, ours, and best / ours.
Outputs are checked against each other first (relative L2 below 2e-2).
"""

import json
import os
import sys

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import llama_tp
import symm
from llama_tp import D

TOKENS = [int(m) for m in os.environ.get("LAYER_TOKENS", "1,16,128,2048").split(",")]
TORCH_VARIANTS = os.environ.get("TORCH_VARIANTS", "nccl,one_shot,two_shot").split(",")
ITERS, WARMUP = 200, 50
# LAYER_ORDER=symm_first times our layers before torch's variants at each
# token count (default: after them), to see what the order costs.
OURS_FIRST = llama_tp.ours_first(os.environ.get("LAYER_ORDER", ""))


def graph_of(fn, calls, warmup=3):
    """A CUDA graph of `calls` calls of fn, captured on a side stream after
    `warmup` calls there (first calls allocate and pick kernels; with weight
    copies, at least one call on each)."""
    warmup = max(warmup, llama_tp.weight_copy_count())
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for _ in range(warmup):
            fn()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for _ in range(calls):
            fn()
    return graph


def bench(fn, graph):
    """µs per call of fn: eagerly, or replays of a CUDA graph of 10 calls
    (with weight copies, the least multiple of their count from 10)."""
    torch.cuda.synchronize()
    if graph:
        copies = llama_tp.weight_copy_count()
        per = -(-10 // copies) * copies
        run, reps = graph_of(fn, per).replay, max(1, ITERS // per)
    else:
        run, reps, per = fn, ITERS, 1
    for _ in range(WARMUP // per + 1):
        run()
    torch.cuda.synchronize()
    dist.barrier()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        run()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000.0 / (reps * per)


def rel_l2(got, reference):
    """Relative L2 distance of got from reference, in f32."""
    return ((got.float() - reference.float()).norm() / reference.float().norm()).item()


def summarize(row, rank):
    """Adds torch's best variant, its ratios to ours and whether every
    output checked out to `row`, and prints it as a JSON line on rank 0."""
    best = min((v, k) for k, v in row.items() if k.startswith("torch_") and k.endswith("_us"))
    compiled = [(v, k) for k, v in row.items() if k.startswith("torch_compile_") and k.endswith("_us")]
    if compiled:
        row["torch_compile_best"] = min(compiled)[1]
        row["torch_compile_best_us"] = min(compiled)[0]
        row["compile_over_symm_cg"] = min(compiled)[0] / row["symm_cg_us"]
        if "symm_prepared_us" in row:
            row["compile_over_symm_prepared"] = min(compiled)[0] / row["symm_prepared_us"]
    row["torch_best"] = best[1]
    row["torch_best_us"] = best[0]
    row["best_over_symm"] = best[0] / row["symm_us"]
    row["best_over_symm_cg"] = best[0] / row["symm_cg_us"]
    row["checks"] = all(row[k] < 2e-2 for k in row if k.endswith("_error"))
    if rank == 0:
        print(json.dumps(row), flush=True)


def in_turn(calls):
    """A function that calls the next of `calls` (one per weight copy) each
    time it is called."""
    turn = [0]

    def call():
        turn[0] += 1
        return calls[turn[0] % len(calls)]()

    return call


_COMPILED = {}


def compiled_variant(name, fn, next_copy, backend="inductor"):
    """torch.compile (Inductor, default mode: the CUDA graph is ours) of
    fn(weights, fused=True), compiled once per variant; dynamic=False
    recompiles per token count, as a serving engine's bucketed graphs do.
    Each call takes the weights `next_copy` returns, as an argument (so
    that copies are inputs to one compiled graph, not its constants).
    `backend` is for tests."""
    if name not in _COMPILED:
        _COMPILED[name] = torch.compile(lambda f, c: f(c, True), dynamic=False, backend=backend)
    inner = _COMPILED[name]
    return lambda: inner(fn, next_copy())


def main():
    s = llama_tp.setup(blocks=("llama", "gelu", "linear"))
    if s.rank == 0:
        print(f"weights: {llama_tp.weight_copy_count()} copies, taken in turn", flush=True)
    entry = {"gelu": "gelu_mlp", "linear": "linear_mlp"}.get(s.block, "llama_mlp")

    def weights(c):
        return {
            "gelu": (c.w_up, c.w_down),
            "linear": (c.w_gate_t, c.w_up_t, c.w_down_t),
        }.get(s.block, (c.w_gate, c.w_up, c.w_down))

    copies, next_copy = llama_tp.weight_copies(s)
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, sys.argv[1], entry)
    others = []
    for spec in sys.argv[2:]:
        label, path = spec.split("=", 1)
        others.append((label, symm.Layer(runtime, path, entry)))

    for m in TOKENS:
        x = s.normal(m, D, std=1.0)
        out = torch.empty_like(x)
        buf = symm_mem.empty((m, D), dtype=torch.bfloat16, device=s.device)
        symm_mem.rendezvous(buf, s.group)

        # Each torch variant is a function of the weights' namespace (one
        # of `copies`) and whether gate and up are one GEMM.
        def nccl(c, fused):
            return llama_tp.nccl(c, x, fused)

        def one_shot(c, fused):
            return llama_tp.one_shot(c, x, buf, fused)

        def two_shot(c, fused):
            return llama_tp.two_shot(c, x, buf, fused)

        # Our layers' arguments, one set per weight copy.
        args = [(m, x, c.norm, *weights(c), out) for c in copies]
        variants = [
            (name, fn)
            for name, fn in [("nccl", nccl), ("one_shot", one_shot), ("two_shot", two_shot)]
            if name in TORCH_VARIANTS
        ]
        for a in args:
            layer(*a)
        reference = nccl(s, False)
        torch.cuda.synchronize()
        row = {"m": m}

        def time_torch():
            for name, fn in variants:
                got = fn(s, True)
                torch.cuda.synchronize()
                row[f"torch_{name}_error"] = rel_l2(got, reference)
                for fused in (False, True):
                    for graph in (False, True):
                        key = f"torch_{name}{'_gateup' if fused else ''}_{'cg' if graph else 'eager'}_us"
                        row[key] = bench(lambda: fn(next_copy(), fused), graph)
            # torch.compile (Inductor) of the fused-gate+up variants, each
            # captured in a CUDA graph as the others are: what a torch user
            # picks instead of us, and the anchor the targets are set against.
            for name, fn in variants:
                compiled = compiled_variant(name, fn, next_copy)
                try:
                    got = compiled()
                    torch.cuda.synchronize()
                    row[f"torch_compile_{name}_error"] = rel_l2(got, reference)
                    row[f"torch_compile_{name}_cg_us"] = bench(compiled, graph=True)
                except Exception as error:  # a variant Inductor cannot compile is reported, not fatal
                    if s.rank == 0:
                        print(f"torch.compile {name} M={m}: {type(error).__name__}: {error}", flush=True)

        def time_ours():
            for label, each in [("", layer)] + [(f"_{label}", other) for label, other in others]:
                layer_fn = in_turn([lambda each=each, a=a: each(*a) for a in args])
                out.zero_()
                layer_fn()
                torch.cuda.synchronize()
                row[f"symm{label}_error"] = rel_l2(out, reference)
                # Its async entry point called from Python per call (its own
                # graph), the same with its arguments checked and converted once
                # (`prepared`: the host time of a serving loop's calls, as a
                # graph's replay over fixed buffers), then captured with 10
                # calls into one of torch's CUDA graphs, as torch's graph
                # variants are (and as a serving engine capturing its whole
                # step would); the output is checked again after the replays.
                row[f"symm{label}_us"] = bench(layer_fn, graph=False)
                prepared = in_turn([each.prepare(*a) for a in args])
                row[f"symm{label}_prepared_us"] = bench(prepared, graph=False)
                out.zero_()
                row[f"symm{label}_cg_us"] = bench(layer_fn, graph=True)
                torch.cuda.synchronize()
                row[f"symm{label}_cg_error"] = rel_l2(out, reference)

        for part in (time_ours, time_torch) if OURS_FIRST else (time_torch, time_ours):
            part()
        summarize(row, s.rank)
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
