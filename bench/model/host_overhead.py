"""Host time per enqueued call of a compiled decoder half-layer (issue 32):
where the enqueued figure is not the GPU's.

    SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \\
      torchrun --nproc_per_node=2 bench/model/host_overhead.py build/layers/libllama_decoder.so

For each token count (LAYER_TOKENS, default 1,16), after warm-up: the CPU
time of CALLS back-to-back calls (few enough that the launch queue never
fills, so no call waits for the GPU) through
  - `layer`: the Python wrapper (`symm.Layer.__call__`: argument checks,
    torch's current stream, the ctypes call), on torch's legacy default
    stream (passed as CU_STREAM_LEGACY; before session 23 joined to a side
    stream by events) and on a stream of its own (`layer_on_stream`);
  - `before`: the wrapper's join as it was before session 15 (torch's
    `wait_stream` both ways and `record_stream` of every tensor), for the
    same call, as the reference;
  - `prepared`: `symm.Layer.prepare(*args)`'s call (arguments checked and
    converted once; per call the device and the pointers);
  - `ctypes`: the compiled entry point alone, its arguments converted once;
  - `graph`: torch.cuda.CUDAGraph.replay of the same call captured, what the
    torch.compile anchor pays per graph;
then the GPU time per call in a CUDA graph, for comparison. One JSON line
per token count (rank 0).
"""

import ctypes
import json
import os
import sys
import time

import torch
import torch.distributed as dist

import llama_tp
import symm
from decoder_bench import attention_weights
from llama_tp import D

CALLS = 200
TOKENS = [int(t) for t in os.environ.get("LAYER_TOKENS", "1,16").split(",")]


def cpu_us(fn, calls=CALLS):
    """Best of 5 runs: CPU µs per call of `calls` calls, GPU drained first."""
    best = float("inf")
    for _ in range(5):
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        best = min(best, (time.perf_counter() - start) * 1e6 / calls)
        torch.cuda.synchronize()
    return best


def main():
    s = llama_tp.setup()
    heads, w_o, next_norm = attention_weights(s)
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, sys.argv[1], "llama_decoder")
    for m in TOKENS:
        attn = s.normal(m, heads, std=1.0)
        x = s.normal(m, D, std=1.0)
        out, normed = torch.empty_like(x), torch.empty_like(x)
        args = (m, attn, w_o, x, s.norm, s.w_gate, s.w_up, s.w_down, next_norm, out, normed)

        def ours():
            layer(*args)

        stream = torch.cuda.current_stream()
        converted = [ctypes.c_int64(m)] + [ctypes.c_void_p(a.data_ptr()) for a in args[1:]]
        raw = ctypes.c_void_p(stream.cuda_stream)

        def direct():
            layer.function(runtime.handle, raw, *converted)

        side = torch.cuda.Stream()

        def before():
            # symm.Layer.__call__ before session 15, on the legacy stream.
            device = torch.cuda.current_device()
            pointers = [ctypes.c_int64(m)]
            for arg in args[1:]:
                if not arg.is_cuda or arg.device.index != device or not arg.is_contiguous():
                    raise ValueError("bad argument")
                pointers.append(ctypes.c_void_p(arg.data_ptr()))
            current = torch.cuda.current_stream()
            side.wait_stream(current)
            layer.function(runtime.handle, ctypes.c_void_p(side.cuda_stream), *pointers)
            current.wait_stream(side)
            for arg in args[1:]:
                arg.record_stream(side)

        own = torch.cuda.Stream()

        def on_stream():
            with torch.cuda.stream(own):
                layer(*args)

        for _ in range(20):
            ours()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            ours()
        torch.cuda.synchronize()
        dist.barrier()
        row = {
            "m": m,
            "layer_cpu_us": cpu_us(ours),
            "prepared_cpu_us": cpu_us(layer.prepare(*args)),
            "layer_on_stream_cpu_us": cpu_us(on_stream),
            "before_cpu_us": cpu_us(before),
            "ctypes_cpu_us": cpu_us(direct),
            "graph_replay_cpu_us": cpu_us(graph.replay),
        }
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(CALLS):
            graph.replay()
        end.record()
        torch.cuda.synchronize()
        row["gpu_us_in_graph"] = start.elapsed_time(end) * 1000.0 / CALLS
        if s.rank == 0:
            print(json.dumps(row), flush=True)
        dist.barrier()
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
