"""The tensor-parallel half of a Llama-3-8B decoder layer (bf16, D 4096,
F 14336) in torch's variants beside the compiled one
(examples/llama_decoder.mlir through the symm package), one process per
GPU, on the same GPUs:

  h      = all_reduce(attn @ w_o) + residual_in
  xn     = RMSNorm(h) * post_norm
  out    = all_reduce((SiLU(xn @ w_gate) * (xn @ w_up)) @ w_down) + h
  normed = RMSNorm(out) * next_norm

  torch: both all-reduces by NCCL, by symm_mem one-shot (each projection
  written into the symmetric buffer) or two-shot in place; gate and up as
  one GEMM (as serving engines do) or two; torch's fused rms_norm; eager,
  or replayed from a CUDA graph of 10 calls. symm: the compiled layer's
  async entry point (its own CUDA graph), and symm_cg: captured 10 calls at
  a time into one of torch's CUDA graphs, like torch's graph variants.

    python/build_layer.sh examples/llama_decoder.mlir build/layers
    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \\
      torchrun --nproc_per_node=2 bench/model/decoder_bench.py build/layers/libllama_decoder.so

More builds can follow as LABEL=PATH (timed and checked as symm_LABEL_us);
LAYER_TOKENS=1,16,... replaces the token counts; TORCH_VARIANTS=two_shot,...
keeps only those of torch's all-reduce variants (nccl, one_shot, two_shot;
the NCCL reference runs either way), for A/B runs of our builds. LAYER_BLOCK=linear times
bench/model/linear_decoder.mlir (entry linear_decoder) instead: the same
layer with its weights in nn.Linear's layout (as Hugging Face checkpoints
store them), torch's variants multiplying by the same n x k weights
(F.linear). LAYER_WEIGHT_COPIES=N rotates N copies of every weight
(the output projection and the norms too) on both sides, as in
bench/model/layer_bench.py. One JSON line per token
count on rank 0, as bench/model/layer_bench.py writes them. Both outputs
are checked against torch's NCCL variant (relative L2 below 2e-2).
"""

import sys

import torch
import torch.distributed as dist
import torch.distributed._symmetric_memory as symm_mem

import llama_tp
import symm
from layer_bench import TOKENS, TORCH_VARIANTS, bench, in_turn, rel_l2, summarize
from llama_tp import D, rmsnorm


def attention_weights(s):
    """This rank's rows of the output projection and the two norms' weights,
    drawn alike on every rank (seed 1)."""
    g = torch.Generator(device="cuda").manual_seed(1)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    heads = D // s.world
    w_o = normal(D, D, std=D**-0.5)[s.rank * heads : (s.rank + 1) * heads].contiguous()
    next_norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    return heads, w_o, next_norm


def decoder(s, attn, x, reduce, fused):
    """The block in torch on the weights of `s` (one of the weight copies,
    `w_o` and `next_norm` among them); `reduce(partial_fn)` runs a
    projection (given as a function of its output buffer or None) and
    returns the all-reduced sum. With LAYER_BLOCK=linear `w_o` is n x k and
    every projection multiplies by its weight's transpose view, as F.linear
    does."""
    w_o, next_norm = s.w_o, s.next_norm
    o_rhs = w_o.t() if s.block == "linear" else w_o
    h = x + reduce(lambda out: torch.mm(attn, o_rhs, out=out))
    # The MLP on h (its RMSNorm is the post-attention norm).
    act = llama_tp.hidden(s, h, fused)
    out = h + reduce(lambda o: torch.mm(act, llama_tp.down_rhs(s), out=o))
    return out, rmsnorm(out, next_norm)


def reducers(s, buf):
    """Each of torch's all-reduce variants as `reduce(project)`: runs a
    projection (a function of its output buffer, None for a fresh tensor)
    and returns the all-reduced sum: by NCCL, or by symm_mem's one-shot or
    two-shot in place on the symmetric buffer `buf`."""

    def by_nccl(project):
        partial = project(None)
        dist.all_reduce(partial)
        return partial

    def by_one_shot(project):
        project(buf)
        return torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", s.group)

    def by_two_shot(project):
        project(buf)
        torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", s.group)
        return buf

    return {"nccl": by_nccl, "one_shot": by_one_shot, "two_shot": by_two_shot}


_COMPILED = {}


def compiled_decoder(name):
    """torch.compile (Inductor) of the block with gate and up fused, one
    per all-reduce variant."""
    if name not in _COMPILED:
        _COMPILED[name] = torch.compile(
            lambda s, attn, x, reduce: decoder(s, attn, x, reduce, True),
            dynamic=False,
        )
    return _COMPILED[name]


def main():
    s = llama_tp.setup(blocks=("llama", "linear"))
    heads, w_o, next_norm = attention_weights(s)
    linear = s.block == "linear"
    entry = "linear_decoder" if linear else "llama_decoder"
    if linear:
        w_o = w_o.t().contiguous()
    s.w_o, s.next_norm = w_o, next_norm
    copies, next_copy = llama_tp.weight_copies(s, extra=("w_o", "next_norm"))

    def mlp(c):
        return (c.w_gate_t, c.w_up_t, c.w_down_t) if linear else (c.w_gate, c.w_up, c.w_down)
    runtime = symm.Runtime()
    layers = [("", symm.Layer(runtime, sys.argv[1], entry))]
    for spec in sys.argv[2:]:
        label, path = spec.split("=", 1)
        layers.append((f"_{label}", symm.Layer(runtime, path, entry)))

    for m in TOKENS:
        attn = s.normal(m, heads, std=1.0)
        x = s.normal(m, D, std=1.0)
        out, normed = torch.empty_like(x), torch.empty_like(x)
        buf = symm_mem.empty((m, D), dtype=torch.bfloat16, device=s.device)
        symm_mem.rendezvous(buf, s.group)

        by = reducers(s, buf)
        variants = [(name, reduce) for name, reduce in by.items() if name in TORCH_VARIANTS]
        reference = decoder(s, attn, x, by["nccl"], False)
        torch.cuda.synchronize()
        row = {"m": m}
        for name, reduce in variants:
            got = decoder(s, attn, x, reduce, True)
            torch.cuda.synchronize()
            row[f"torch_{name}_error"] = max(rel_l2(g, r) for g, r in zip(got, reference))
            for fused in (False, True):
                for graph in (False, True):
                    key = f"torch_{name}{'_gateup' if fused else ''}_{'cg' if graph else 'eager'}_us"
                    row[key] = bench(
                        lambda reduce=reduce, fused=fused: decoder(
                            next_copy(), attn, x, reduce, fused
                        ),
                        graph,
                    )
        # torch.compile (Inductor) of each fused variant, captured in a CUDA
        # graph like the others: the anchor a torch user would pick.
        for name, reduce in variants:
            compiled = compiled_decoder(name)
            call = lambda compiled=compiled, reduce=reduce: compiled(  # noqa: E731
                next_copy(), attn, x, reduce
            )
            try:
                got = call()
                torch.cuda.synchronize()
                row[f"torch_compile_{name}_error"] = max(
                    rel_l2(g, r) for g, r in zip(got, reference)
                )
                row[f"torch_compile_{name}_cg_us"] = bench(call, graph=True)
            except Exception as error:  # reported, not fatal
                if s.rank == 0:
                    print(f"torch.compile {name} M={m}: {type(error).__name__}: {error}", flush=True)
        args = [(m, attn, c.w_o, x, c.norm, *mlp(c), c.next_norm, out, normed) for c in copies]
        for label, layer in layers:
            ours = in_turn([lambda layer=layer, a=a: layer(*a) for a in args])
            out.zero_()
            normed.zero_()
            ours()
            torch.cuda.synchronize()
            row[f"symm{label}_error"] = max(
                rel_l2(out, reference[0]), rel_l2(normed, reference[1])
            )
            row[f"symm{label}_us"] = bench(ours, graph=False)
            prepared = in_turn([layer.prepare(*a) for a in args])
            row[f"symm{label}_prepared_us"] = bench(prepared, graph=False)
            out.zero_()
            normed.zero_()
            row[f"symm{label}_cg_us"] = bench(ours, graph=True)
            torch.cuda.synchronize()
            row[f"symm{label}_cg_error"] = max(
                rel_l2(out, reference[0]), rel_l2(normed, reference[1])
            )
        summarize(row, s.rank)
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
