"""Where the enqueued call of a compiled layer loses to the same layer
inside torch's CUDA graph: the stream join, or the layer's own graph launch.

The compiled Llama MLP block (matmul_build.sh's libmlp_DxF.so, world size
1) called back to back, µs per call (CUDA events, 200 calls after 50):

  legacy    on torch's legacy default stream: each call records an event,
            a side stream waits for it, the layer replays its graph there,
            and the legacy stream waits for the side stream (symm.runtime's
            on_torch_stream), what a torch program on the default stream pays;
  stream    on a torch stream of its own: the layer's graph replays on it
            directly, no join;
  torch_cg  10 calls captured into one of torch's CUDA graphs, replayed.

    SYMM_RUNTIME_LIB=.../libsymm_runtime.so PYTHONPATH=python:bench/model \\
      symm-launch -n 1 python3 bench/model/stream_join.py LIB D F --tokens 1,16
"""

import argparse
import json

import torch

import symm

ITERS, WARMUP = 200, 50


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
    for m in [int(t) for t in args.tokens.split(",") if t]:
        x = normal(m, D, std=1.0)
        out = torch.empty_like(x)
        call = layer.prepare(m, x, norm, *weights, out)
        for _ in range(3):
            call()
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=own):
            for _ in range(10):
                call()
        for rnd in range(args.rounds):
            row = {
                "m": m,
                "round": rnd + 1,
                "legacy_us": per_call(call, 1, legacy),
                "stream_us": per_call(call, 1, own),
                "torch_cg_us": per_call(graph.replay, 10, legacy),
            }
            print(json.dumps(row), flush=True)
    runtime.close()


if __name__ == "__main__":
    main()
