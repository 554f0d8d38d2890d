"""The compiled Llama MLP block at any widths against torch's f32
reference, at world size 1 or tensor-parallel (each rank of symm-launch
holds its shard: F columns of gate and up, F rows of down); and, per
kernel, where its time goes.

The block is examples/llama_mlp.mlir with the hidden size D and the MLP
width F put in (bench/device/matmul_build.sh makes such variants), so the
generated matmul kernels (symm-linalg-matmul-to-gpu) meet widths that are
not powers of two, shards that are not multiples of 128 and K that is not
a multiple of their tile. For each token count: fresh random inputs, the
output poisoned with NaN before the call (every element must be written),
each element within 2^-6 of its magnitude plus 2^-6 of the reference's RMS
and the relative L2 error below 1e-2 (examples/cpp/llama_common.h's
tolerances), called twice (the first call of a count measures the two
ways, the second runs the chosen one) and in a CUDA graph of ours.

With --gelu: the non-gated MLP block of bench/model/gelu_mlp.mlir instead
(RMSNorm, one up projection, GELU with the tanh approximation, the down
projection, all-reduce, residual), whose lone up projection takes the norm
as its prologue and GELU as its epilogue.

With --qkv: bench/model/qkv.mlir instead (RMSNorm, then one projection
of F columns, world size 1): a lone matmul with the norm as its fused
prologue and no epilogue.

With --linear: bench/model/linear_mlp.mlir instead, the same block with
its weights in nn.Linear's layout (gate and up F x D, down D x F, as
Hugging Face checkpoints store them), each matmul reading its weight
transposed; the layer is handed the transposes of the same weights.

With --merged: bench/model/merged_mlp.mlir instead, the same block with
one gate_up weight of 2F x D in nn.Linear's layout (vLLM's
MergedColumnParallelLinear: the gate's rows, then the up projection's),
read as its two row halves, and the down projection's D x F.

With --decoder A: the decoder half-layer (examples/llama_decoder.mlir, A
the attention features a rank holds) instead: o_proj, its all-reduce with
the residual and the post-attention RMSNorm, the MLP, its all-reduce with
the residual and the next layer's RMSNorm; both outputs are checked, with
twice the element-wise bound (two residual blocks, as the C++ decoder app
checks them).

Under symm-launch -n W (WORLD_SIZE = W > 1) the library is the block
compiled for W ranks with F the width a rank holds: every rank draws the
same full weights (D x W F), takes its shard, and checks the all-reduced
output against the whole block's reference. Ranks may share a GPU
(symm-launch --gpus 1).

With --misalign: each operand in turn (x, the norm weight, the three
weights, the output) sits 2 bytes past a 16-byte boundary, as a view into a
larger tensor may. The kernels move 16-byte vectors, so the call must be
refused with an error that names the argument (not fault in a kernel), and
the next call, with aligned operands, must still be right.

With --profile M,...: the per-kernel µs of one call in a CUDA graph of 20
calls (torch.profiler), with the weight bytes and the TB/s each matmul
kernel reads them at (gate+up: 2 D F bf16; down: F D bf16). With
--profile-scrub read or write, a torch kernel reads (sums) or writes (zeroes)
a 128 MB buffer after each call in that graph, so that the next call finds
L2 holding none of the last one's lines (a diagnostic: whether a kernel's
time depends on what the kernels before it left in L2). With
--profile-copies N, the graph's calls take N copies of the weights in
turn, as a model's layers each read their own (1: the same weights every
call, as the layer benches do). --profile runs with --decoder too (its
kernels' µs, without the TB/s: its matmuls are not told apart by time).

    SYMM_RUNTIME_LIB=.../libsymm_runtime.so PYTHONPATH=python:bench/model \\
      symm-launch -n 1 python3 bench/model/matmul_check.py LIB D F \\
      [--tokens 1,16,...] [--profile 1,16]
    symm-launch -n 4 --gpus 1 python3 bench/model/matmul_check.py LIB_TP4 D F

Exit status 1 if a check fails.
"""

import argparse
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import symm
from layer_profile import kernel_times

EPS = 1e-5


def rms_norm(h, weight):
    """RMSNorm of f32 rows `h` by a bf16 weight, in f32."""
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + EPS) * weight.float()


def reference(x, norm, w_gate, w_up, w_down):
    """The block in f32 from the bf16 values: no bf16 intermediates."""
    xf = x.float()
    xn = rms_norm(xf, norm)
    act = torch.nn.functional.silu(xn @ w_gate.float()) * (xn @ w_up.float())
    return xf + act @ w_down.float()


def gelu_reference(x, norm, w_up, w_down):
    """The non-gated block in f32 from the bf16 values."""
    xf = x.float()
    act = torch.nn.functional.gelu(rms_norm(xf, norm) @ w_up.float(), approximate="tanh")
    return xf + act @ w_down.float()


def qkv_reference(x, norm, w):
    """The input norm and projection in f32 from the bf16 values."""
    return rms_norm(x.float(), norm) @ w.float()


def decoder_reference(attn, w_o, residual, post_norm, w_gate, w_up, w_down, next_norm):
    """The decoder half-layer in f32 from the bf16 values: (out, normed)."""
    h = residual.float() + attn.float() @ w_o.float()
    xn = rms_norm(h, post_norm)
    out = h + (torch.nn.functional.silu(xn @ w_gate.float()) * (xn @ w_up.float())) @ w_down.float()
    return out, rms_norm(out, next_norm)


def verdict(got, want, blocks=1):
    """Whether `got` is within bf16 tolerances of `want`, its relative L2
    error and its worst element's error over its bound; `blocks` residual
    blocks, each with its roundings, get that many times the element-wise
    bound (the decoder's two, as examples/cpp/llama_decoder.cpp has it)."""
    got = got.float()
    if not torch.isfinite(got).all():
        return False, float("nan"), float("nan")
    rms = want.pow(2).mean().sqrt()
    limit = blocks * (want.abs() * 2**-6 + rms * 2**-6)
    err = (got - want).abs()
    worst = (err / limit).max().item()
    rel = ((got - want).norm() / want.norm()).item()
    return worst <= 1.0 and rel < 1e-2, rel, worst


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("D", type=int)
    parser.add_argument("F", type=int)
    parser.add_argument("--tokens", default="1,2,7,15,16,17,33,64,100,128,129,256")
    parser.add_argument("--profile", default="")
    parser.add_argument("--profile-scrub", choices=["none", "read", "write"], default="none")
    parser.add_argument("--profile-copies", type=int, default=1)
    parser.add_argument("--entry", default=None)
    parser.add_argument("--gelu", action="store_true",
                        help="check the non-gated block (bench/model/gelu_mlp.mlir)")
    parser.add_argument("--qkv", action="store_true",
                        help="check the norm + projection of bench/model/qkv.mlir")
    parser.add_argument("--linear", action="store_true",
                        help="check the block with nn.Linear-layout weights (bench/model/linear_mlp.mlir)")
    parser.add_argument("--merged", action="store_true",
                        help="check the block with a merged gate_up weight (bench/model/merged_mlp.mlir)")
    parser.add_argument("--decoder", type=int, default=0, metavar="A",
                        help="check the decoder half-layer, A attention features a rank")
    parser.add_argument("--misalign", action="store_true")
    args = parser.parse_args()
    D, F = args.D, args.F
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and (args.misalign or args.profile):
        sys.exit("matmul_check: --misalign and --profile run at world size 1 only")
    if args.profile_copies < 1:
        sys.exit(f"matmul_check: --profile-copies {args.profile_copies}: at least 1")
    A = args.decoder
    if sum([bool(A), args.gelu, args.qkv, args.linear, args.merged]) > 1:
        sys.exit("matmul_check: --gelu, --qkv, --linear, --merged and --decoder are other blocks; "
                 "pick one")
    if (A or args.gelu or args.qkv or args.linear or args.merged) and (
            args.misalign or args.profile and args.qkv):
        sys.exit("matmul_check: --misalign checks the Llama MLP block only, --profile no qkv")
    if args.qkv and world > 1:
        sys.exit("matmul_check: --qkv runs at world size 1")
    entry = args.entry or (
        "llama_decoder" if A else "gelu_mlp" if args.gelu else "qkv" if args.qkv
        else "linear_mlp" if args.linear else "merged_mlp" if args.merged else "llama_mlp"
    )
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    # The same seed on every rank: the same full weights and inputs.
    g = torch.Generator(device="cuda").manual_seed(0)
    tag = f"[rank {rank}/{world}] " if world > 1 else ""

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    def misplaced(t):
        """A copy of `t` one element past a 16-byte boundary."""
        storage = torch.empty(t.numel() + 8, dtype=t.dtype, device=t.device)
        view = storage[1 : 1 + t.numel()].view(t.shape)
        view.copy_(t)
        assert view.data_ptr() % 16 == 2
        return view

    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    # The whole block's weights; this rank holds columns (gate, up) and
    # rows (down) [rank F, (rank + 1) F).
    full_gate = normal(D, world * F, std=D**-0.5)
    full_up = normal(D, world * F, std=D**-0.5)
    full_down = normal(world * F, D, std=(world * F) ** -0.5)
    # Copies, not views: a shard's view starts wherever rank F lands, and
    # the compiled program refuses buffers off a 16-byte boundary.
    shard = slice(rank * F, (rank + 1) * F)
    own = dict(memory_format=torch.contiguous_format)
    w_gate, w_up = full_gate[:, shard].clone(**own), full_up[:, shard].clone(**own)
    w_down = full_down[shard].clone(**own)
    # The layer's weights: as the reference reads them, or (--linear)
    # their transposes, nn.Linear's [out_features, in_features].
    mlp_weights = [w_gate, w_up, w_down]
    if args.linear:
        mlp_weights = [w.t().contiguous() for w in mlp_weights]
    if args.merged:
        mlp_weights = [torch.cat([w_gate.t(), w_up.t()]).contiguous(), w_down.t().contiguous()]
    if A:
        # The decoder's: o_proj's rows [rank A, (rank + 1) A) and the next norm.
        full_o = normal(world * A, D, std=(world * A) ** -0.5)
        w_o = full_o[rank * A : (rank + 1) * A].clone(**own)
        next_norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)

    def case(m):
        """This count's inputs, the references of its outputs, and a call
        that writes fresh NaN-poisoned outputs and returns them."""
        if args.qkv:
            x = normal(m, D, std=1.0)
            want = [qkv_reference(x, norm, full_up)]
            inputs = [x, norm, w_up]
        elif args.gelu:
            x = normal(m, D, std=1.0)
            want = [gelu_reference(x, norm, full_up, full_down)]
            inputs = [x, norm, w_up, w_down]
        elif not A:
            x = normal(m, D, std=1.0)
            want = [reference(x, norm, full_gate, full_up, full_down)]
            inputs = [x, norm, *mlp_weights]
        else:
            attn = normal(m, world * A, std=1.0)
            residual = normal(m, D, std=1.0)
            want = list(decoder_reference(attn, full_o, residual, norm, full_gate, full_up,
                                          full_down, next_norm))
            mine = attn[:, rank * A : (rank + 1) * A].clone(**own)
            inputs = [mine, w_o, residual, norm, w_gate, w_up, w_down, next_norm]

        def call():
            outs = [torch.full(w.shape, float("nan"), dtype=torch.bfloat16, device="cuda")
                    for w in want]
            layer(m, *inputs, *outs)
            return outs

        return inputs, want, call

    runtime = symm.Runtime()
    layer = symm.Layer(runtime, args.library, entry)
    stream = torch.cuda.Stream()
    failed = False
    with torch.cuda.stream(stream):
        for m in [int(t) for t in args.tokens.split(",") if t]:
            inputs, want, call = case(m)
            if args.misalign:
                operands = [*inputs, torch.empty_like(inputs[0])]
                for index in range(len(operands)):
                    moved = list(operands)
                    moved[index] = misplaced(moved[index])
                    try:
                        layer(m, *moved)
                        torch.cuda.synchronize()
                        refused = None
                    except symm.SymmError as error:
                        refused = str(error)
                    ok = refused is not None and f"argument #{index} " in refused
                    failed |= not ok
                    print(f"{'PASS' if ok else 'FAIL'} D={D} F={F} M={m}: operand {index} "
                          f"2 bytes off 16: {refused or 'not refused'}", flush=True)
            results = []
            for _ in range(3):
                outs = call()
                torch.cuda.synchronize()
                # The worst of the outputs (the decoder's out and normed).
                checks = [verdict(o, w, blocks=2 if A else 1) for o, w in zip(outs, want)]
                results.append((all(c[0] for c in checks), max(c[1] for c in checks),
                                max(c[2] for c in checks)))
            ok = all(r[0] for r in results)
            failed |= not ok
            what = (f"decoder A={A} " if A else "gelu " if args.gelu else "qkv " if args.qkv
                    else "linear " if args.linear else "merged " if args.merged else "")
            print(
                f"{tag}{'PASS' if ok else 'FAIL'} {what}D={D} F={F} M={m}: rel L2 "
                + ", ".join(f"{r[1]:.2e}" for r in results)
                + " (calls 1-3), worst element at "
                + ", ".join(f"{r[2]:.2f}" for r in results)
                + " of its bound",
                flush=True,
            )
        for m in [int(t) for t in args.profile.split(",") if t]:
            x = normal(m, D, std=1.0)
            out = torch.empty_like(x)
            mats = [w_up, w_down] if args.gelu else mlp_weights
            if A:
                # The decoder's: o_proj's weight, then the MLP's.
                mats = [w_o, *mats]
                attn, normed = normal(m, A, std=1.0), torch.empty_like(x)

            def arguments(weights):
                """The call's arguments with these weights."""
                if A:
                    return [attn, weights[0], x, norm, *weights[1:], next_norm, out, normed]
                return [x, norm, *weights, out]

            copies = [mats] + [[w.clone() for w in mats] for _ in range(args.profile_copies - 1)]
            for each in copies:
                for _ in range(3):
                    layer(m, *arguments(each))
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            calls = 20
            scratch = (torch.empty(64 << 20, dtype=torch.bfloat16, device="cuda")
                       if args.profile_scrub != "none" else None)
            sink = torch.empty((), dtype=torch.float32, device="cuda")
            with torch.cuda.graph(graph, stream=stream):
                for call in range(calls):
                    layer(m, *arguments(copies[call % len(copies)]))
                    if args.profile_scrub == "write":
                        scratch.zero_()
                    elif args.profile_scrub == "read":
                        torch.sum(scratch, dim=0, dtype=torch.float32, out=sink)
            graph.replay()
            torch.cuda.synchronize()
            with profile(activities=[ProfilerActivity.CUDA]) as prof:
                graph.replay()
                torch.cuda.synchronize()
            totals, counts, spans = kernel_times(prof)
            wall = (spans[-1][1] - spans[0][0]) / calls if spans else 0.0
            print(f"== D={D} F={F} M={m}: {sum(totals.values()) / calls:.1f} us of kernels, "
                  f"{wall:.1f} us wall per call", flush=True)
            for kernel, us in sorted(totals.items(), key=lambda kv: -kv[1]):
                per = us / calls
                note = ""
                if kernel.startswith("symm_matmul") and not A:
                    # Which matmul by its weight bytes: the pair reads 2 D F,
                    # the down projection F D (in slices or whole).
                    pair = 2 * D * F * 2 / (per * 1e-6) / 1e12
                    down = F * D * 2 / (per * 1e-6) / 1e12
                    note = f"  (as gate+up {pair:.2f} TB/s, as down {down:.2f} TB/s)"
                print(f"  {per:8.1f} us x{counts[kernel] / calls:.0f}  {kernel[:90]}{note}",
                      flush=True)
    runtime.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
