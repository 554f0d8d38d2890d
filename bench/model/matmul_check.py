"""The compiled Llama MLP block at any widths, on one GPU (world size 1),
against torch's f32 reference; and, per kernel, where its time goes.

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

With --misalign: each operand in turn (x, the norm weight, the three
weights, the output) sits 2 bytes past a 16-byte boundary, as a view into a
larger tensor may. The kernels move 16-byte vectors, so the call must be
refused with an error that names the argument (not fault in a kernel), and
the next call, with aligned operands, must still be right.

With --profile M,...: the per-kernel µs of one call in a CUDA graph of 20
calls (torch.profiler), with the weight bytes and the TB/s each matmul
kernel reads them at (gate+up: 2 D F bf16; down: F D bf16).

    SYMM_RUNTIME_LIB=.../libsymm_runtime.so PYTHONPATH=python:bench/model \\
      torchrun --nproc_per_node=1 bench/model/matmul_check.py LIB D F \\
      [--tokens 1,16,...] [--profile 1,16]

Exit status 1 if a check fails.
"""

import argparse
import sys

import torch
from torch.profiler import ProfilerActivity, profile

import symm
from layer_profile import kernel_times

EPS = 1e-5


def reference(x, norm, w_gate, w_up, w_down):
    """The block in f32 from the bf16 values: no bf16 intermediates."""
    xf = x.float()
    xn = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + EPS) * norm.float()
    act = torch.nn.functional.silu(xn @ w_gate.float()) * (xn @ w_up.float())
    return xf + act @ w_down.float()


def verdict(got, want):
    got = got.float()
    if not torch.isfinite(got).all():
        return False, float("nan"), float("nan")
    rms = want.pow(2).mean().sqrt()
    limit = want.abs() * 2**-6 + rms * 2**-6
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
    parser.add_argument("--entry", default="llama_mlp")
    parser.add_argument("--misalign", action="store_true")
    args = parser.parse_args()
    D, F = args.D, args.F
    torch.cuda.set_device(0)
    g = torch.Generator(device="cuda").manual_seed(0)

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
    w_gate, w_up = normal(D, F, std=D**-0.5), normal(D, F, std=D**-0.5)
    w_down = normal(F, D, std=F**-0.5)
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, args.library, args.entry)
    stream = torch.cuda.Stream()
    failed = False
    with torch.cuda.stream(stream):
        for m in [int(t) for t in args.tokens.split(",") if t]:
            x = normal(m, D, std=1.0)
            want = reference(x, norm, w_gate, w_up, w_down)
            if args.misalign:
                operands = [x, norm, w_gate, w_up, w_down, torch.empty_like(x)]
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
            for call in range(3):
                out = torch.full((m, D), float("nan"), dtype=torch.bfloat16, device="cuda")
                layer(m, x, norm, w_gate, w_up, w_down, out)
                torch.cuda.synchronize()
                results.append(verdict(out, want))
            ok = all(r[0] for r in results)
            failed |= not ok
            print(
                f"{'PASS' if ok else 'FAIL'} D={D} F={F} M={m}: rel L2 "
                + ", ".join(f"{r[1]:.2e}" for r in results)
                + " (calls 1-3), worst element at "
                + ", ".join(f"{r[2]:.2f}" for r in results)
                + " of its bound",
                flush=True,
            )
        for m in [int(t) for t in args.profile.split(",") if t]:
            x = normal(m, D, std=1.0)
            out = torch.empty_like(x)
            for _ in range(3):
                layer(m, x, norm, w_gate, w_up, w_down, out)
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            calls = 20
            with torch.cuda.graph(graph, stream=stream):
                for _ in range(calls):
                    layer(m, x, norm, w_gate, w_up, w_down, out)
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
                if kernel.startswith("symm_matmul"):
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
