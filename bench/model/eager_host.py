"""Host time per eager call of a compiled layer at world size 1: what the
host spends enqueuing a call when no CUDA graph replays it
(SYMM_CUDA_GRAPHS=0; also a call's first run, and a fallback region).

    SYMM_CUDA_GRAPHS=0 SYMM_RUNTIME_LIB=DIR/libsymm_runtime.so PYTHONPATH=python:bench/model \\
      symm-launch -n 1 python3 bench/model/eager_host.py DIR/libmlp_4096x7168.so 4096 7168 \\
      [--decoder A] [--tokens 1,16] [--calls 30] [--rounds 5]

For each token count, after warm-up calls: the host's wall time of CALLS
back-to-back calls (few enough that the launch queue never fills, so no
call waits for the GPU), then the GPU's time per call (events around the
same calls, after a synchronize), the least of ROUNDS rounds each. One
JSON line per token count.
"""

import argparse
import json
import os
import time

import torch

import symm


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("D", type=int)
    parser.add_argument("F", type=int)
    parser.add_argument("--decoder", type=int, default=0, metavar="A")
    parser.add_argument("--tokens", default="1,16")
    parser.add_argument("--calls", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--label", default="")
    args = parser.parse_args()
    D, F, A = args.D, args.F, args.decoder
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std=1.0):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    runtime = symm.Runtime()
    layer = symm.Layer(runtime, args.library, "llama_decoder" if A else "llama_mlp")
    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    w_gate, w_up, w_down = normal(D, F, std=D**-0.5), normal(D, F, std=D**-0.5), normal(F, D, std=F**-0.5)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for m in [int(t) for t in args.tokens.split(",") if t]:
            x, out = normal(m, D), torch.empty(m, D, dtype=torch.bfloat16, device="cuda")
            if A:
                attn, w_o = normal(m, A), normal(A, D, std=A**-0.5)
                normed, next_norm = torch.empty_like(out), norm.clone()
                arguments = [attn, w_o, x, norm, w_gate, w_up, w_down, next_norm, out, normed]
            else:
                arguments = [x, norm, w_gate, w_up, w_down, out]
            for _ in range(10):
                layer(m, *arguments)
            torch.cuda.synchronize()
            host, gpu = float("inf"), float("inf")
            for _ in range(args.rounds):
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record(stream)
                began = time.perf_counter()
                for _ in range(args.calls):
                    layer(m, *arguments)
                host = min(host, (time.perf_counter() - began) * 1e6 / args.calls)
                end.record(stream)
                end.synchronize()
                gpu = min(gpu, start.elapsed_time(end) * 1000 / args.calls)
            print(json.dumps({"label": args.label, "layer": "decoder" if A else "mlp", "m": m,
                              "host_us_per_call": round(host, 2),
                              "gpu_us_per_call": round(gpu, 2)}), flush=True)
    runtime.close()


if __name__ == "__main__":
    main()
