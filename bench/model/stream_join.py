"""Where the enqueued call of a compiled layer loses to the same layer
inside torch's CUDA graph: the stream join, or the layer's own graph launch.

The compiled Llama MLP block (matmul_build.sh's libmlp_DxF.so, world size
1) called back to back, µs per call (CUDA events, 200 calls after 50):

  legacy    on torch's legacy default stream (what a torch program on the
            default stream pays: symm.runtime's on_torch_stream passes it
            as CU_STREAM_LEGACY, on which the runtime replays the layer's
            graph; until session 23 a side stream joined to it by events);
  joined    the same call on a side stream joined to the legacy stream by
            an event each way (the earlier way, for comparison);
  stream    on a torch stream of its own: the layer's graph replays on it
            directly;
  torch_cg  10 calls captured into one of torch's CUDA graphs, replayed.

First, on the legacy stream, the same call three times (the runtime runs
it, captures its graph on a stream of its own, replays it there): each
output is checked against torch's f32 reference of the block
(matmul_check.py's bounds), and the captured and replayed calls' equal bit
for bit to a call on a stream of its own (the first call measures the
generated kernels against cuBLAS, so its output may be either's). A check
that fails exits 1.

    SYMM_RUNTIME_LIB=.../libsymm_runtime.so PYTHONPATH=python:bench/model \\
      symm-launch -n 1 python3 bench/model/stream_join.py LIB D F --tokens 1,16
"""

import argparse
import json
import sys

import torch

import symm
from matmul_check import reference, verdict

ITERS, WARMUP = 200, 50


class Joined:
    """Runs a call on a side stream joined to the legacy stream by an event
    each way."""

    def __init__(self, call):
        self.call = call
        self.side = torch.cuda.Stream()
        self.ready, self.done = torch.cuda.Event(), torch.cuda.Event()

    def __call__(self):
        legacy = torch.cuda.current_stream()
        self.ready.record(legacy)
        self.side.wait_event(self.ready)
        with torch.cuda.stream(self.side):
            self.call()
        self.done.record(self.side)
        legacy.wait_event(self.done)


def per_call(run, per, stream):
    """µs per call of `run` (which makes `per` calls) on `stream`."""
    with torch.cuda.stream(stream):
        for _ in range(WARMUP // per + 1):
            run()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(ITERS // per):
            run()
        end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1000.0 / ITERS


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("D", type=int)
    parser.add_argument("F", type=int)
    parser.add_argument("--tokens", default="1,16")
    parser.add_argument("--entry", default="llama_mlp")
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    D, F = args.D, args.F
    torch.cuda.set_device(0)
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    weights = [normal(D, F, std=D**-0.5), normal(D, F, std=D**-0.5), normal(F, D, std=F**-0.5)]
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, args.library, args.entry)
    legacy = torch.cuda.default_stream()
    own = torch.cuda.Stream()
    failed = False
    for m in [int(t) for t in args.tokens.split(",") if t]:
        x = normal(m, D, std=1.0)
        out = torch.empty_like(x)
        call = layer.prepare(m, x, norm, *weights, out)
        want = reference(x, norm, *weights)
        outs = []
        for _ in range(3):
            out.fill_(float("nan"))
            call()
            torch.cuda.synchronize()
            outs.append(out.clone())
        with torch.cuda.stream(own):
            out.fill_(float("nan"))
            call()
        torch.cuda.synchronize()
        checks = [verdict(o, want) for o in outs]
        same = all(torch.equal(o, out) for o in outs[1:])
        ok = all(c[0] for c in checks) and same
        failed |= not ok
        print(f"{'PASS' if ok else 'FAIL'} M={m}: on the legacy stream run, captured and replayed: "
              f"rel L2 {', '.join(f'{c[1]:.2e}' for c in checks)}; the captured and replayed "
              f"calls {'equal' if same else 'NOT equal'} bit for bit to the call on a stream of "
              "its own", flush=True)
        joined = Joined(call)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=own):
            for _ in range(10):
                call()
        for rnd in range(args.rounds):
            row = {
                "m": m,
                "round": rnd + 1,
                "legacy_us": per_call(call, 1, legacy),
                "joined_us": per_call(joined, 1, legacy),
                "stream_us": per_call(call, 1, own),
                "torch_cg_us": per_call(graph.replay, 10, legacy),
            }
            print(json.dumps(row), flush=True)
    runtime.close()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
