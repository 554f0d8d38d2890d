"""cuBLAS (torch.mm) reading a weight of BYTES bytes at M = 1 and 16 rows
(K = 4096 rows of bf16, rotated over copies larger than the L2, in a CUDA
graph), beside bench/floor/stream_read.cu: the floor must be no slower
than cuBLAS reading the same bytes.

    python3 bench/floor/floor.py 176160768 117440512 58720256
"""

import sys

import torch

K = 4096


def main():
    for size in [int(a) for a in sys.argv[1:]] or [176160768, 117440512, 58720256]:
        n = size // (K * 2)
        copies = max(2, (512 << 20) // size + 1)
        weights = [torch.randn(K, n, device="cuda").to(torch.bfloat16) for _ in range(copies)]
        for m in (1, 16):
            x = torch.randn(m, K, device="cuda").to(torch.bfloat16)
            out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                for w in weights:
                    torch.mm(x, w, out=out)
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            reps = 4 * copies
            with torch.cuda.graph(graph, stream=stream):
                for i in range(reps):
                    torch.mm(x, weights[i % copies], out=out)
            graph.replay()
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(5):
                graph.replay()
            end.record()
            torch.cuda.synchronize()
            us = start.elapsed_time(end) * 1000 / (5 * reps)
            print(f"CUBLAS {size} bytes M={m}: {us:.1f} us  {size / us / 1e6:.2f} TB/s", flush=True)
        del weights


if __name__ == "__main__":
    main()
