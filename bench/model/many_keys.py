"""A model's pattern of calls to one compiled layer, timed: the Llama MLP
block at world size 1 (a build of examples/llama_mlp.mlir for one rank, D
and F given) called once per layer, each layer with its own weights, at
several token counts in turn (a serving loop whose steps change their
batch), through the layer's asynchronous entry point (its own CUDA graph
per set of arguments). The runtime keeps one graph per set of arguments; a
cache smaller than the sets a step cycles through (session 25's runtime
kept 64) forgets each before its next use, so every call runs eagerly,
allocates and synchronizes. Prints µs per layer call (CUDA events over
whole steps after warm-up steps) and the host's µs per call to enqueue
them, and the graphs captured and replayed. --stream calls on a stream of
torch's own instead of the legacy default stream; --ahead N keeps the host
at most N calls ahead of the GPU; --check checks each token count's
output against torch's f32 reference (exit status 1 on a failure).

    SYMM_RUNTIME_LIB=.../libsymm_runtime.so PYTHONPATH=python \\
      symm-launch -n 1 python3 bench/model/many_keys.py LIB D F --layers 80 --tokens 1,16,17
"""

import argparse
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import symm
from layer_profile import kernel_times, wall_and_idle
from matmul_check import reference, verdict


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("D", type=int)
    parser.add_argument("F", type=int)
    parser.add_argument("--layers", type=int, default=80)
    parser.add_argument("--tokens", default="1,16,17")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--stream", action="store_true",
                        help="call on a stream of torch's own, not the legacy default stream")
    parser.add_argument("--ahead", type=int, default=0,
                        help="let the host run at most this many calls ahead of the GPU (0: unbounded)")
    parser.add_argument("--check", action="store_true",
                        help="check each token count's output (the last layer's) against torch's f32 reference")
    parser.add_argument("--profile", action="store_true",
                        help="also profile one step: µs per call of each kernel, and the GPU's idle time")
    args = parser.parse_args()
    D, F = args.D, args.F
    tokens = [int(t) for t in args.tokens.split(",")]
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    layers = [
        (
            (1 + normal(D, std=0.1).float()).to(torch.bfloat16),
            normal(D, F, std=D**-0.5),
            normal(D, F, std=D**-0.5),
            normal(F, D, std=F**-0.5),
        )
        for _ in range(args.layers)
    ]
    inputs = {m: (normal(m, D, std=1.0), torch.empty(m, D, dtype=torch.bfloat16, device="cuda"))
              for m in tokens}
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, args.library, "llama_mlp")

    # With --ahead N, an event after each call: call i waits for call i - N.
    marks = [torch.cuda.Event() for _ in range(args.ahead)]
    made = [0]

    def step():
        for m in tokens:
            x, out = inputs[m]
            for weights in layers:
                if marks:
                    mark = marks[made[0] % len(marks)]
                    if made[0] >= len(marks):
                        mark.synchronize()
                layer(m, x, *weights, out)
                if marks:
                    mark.record()
                made[0] += 1

    if args.stream:
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        torch.cuda.set_stream(side)
    for _ in range(3):  # first calls: eager, then captured
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    enqueue = time.perf_counter()
    for _ in range(args.steps):
        step()
    enqueue = time.perf_counter() - enqueue
    end.record()
    torch.cuda.synchronize()
    calls = args.steps * len(tokens) * args.layers
    us = start.elapsed_time(end) * 1000.0 / calls
    # The host's time to make the calls (before the synchronize): where it
    # is as long as the GPU's, the host sets the pace.
    print(f"layers={args.layers} tokens={args.tokens}: {us:.1f} us per layer call "
          f"({len(tokens) * args.layers} argument sets in turn), "
          f"{enqueue * 1e6 / calls:.1f} us of it to enqueue", flush=True)
    failed = False
    if args.check:
        # Every layer writes `out`: after a step it holds the last layer's.
        for m in tokens:
            x, out = inputs[m]
            ok, rel, worst = verdict(out, reference(x, *layers[-1]))
            failed |= not ok
            print(f"{'PASS' if ok else 'FAIL'} many_keys layers={args.layers} M={m}: rel L2 {rel:.2e}, "
                  f"worst element at {worst:.2f} of its bound", flush=True)
    if args.profile:
        # Whether the kernels run slower, or the GPU idles between them.
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            step()
            torch.cuda.synchronize()
        totals, counts, spans = kernel_times(prof)
        calls = len(tokens) * args.layers
        wall, idle = wall_and_idle(spans)
        print(f"  profile: {sum(totals.values()) / calls:.1f} us of kernels, "
              f"{wall / calls:.1f} us wall, {idle / calls:.1f} us idle per call", flush=True)
        for kernel, us in sorted(totals.items(), key=lambda kv: -kv[1]):
            print(f"  {us / calls:8.1f} us x{counts[kernel] / calls:.0f}  {kernel[:90]}", flush=True)
    runtime.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
