#!/usr/bin/env python3
# Run on the 2-GPU machine: python3 bench/probes/peer_copy_bandwidth.py
# Copy-engine bandwidth between the two GPUs: 32 MB peer copies, one way and both ways at once.
import torch, time
n = 32 << 20
a0 = torch.empty(n, dtype=torch.uint8, device="cuda:0"); b0 = torch.empty_like(a0)
a1 = torch.empty(n, dtype=torch.uint8, device="cuda:1"); b1 = torch.empty_like(a1)
s0 = torch.cuda.Stream(device=0); s1 = torch.cuda.Stream(device=1)
def both(k):
    for _ in range(k):
        with torch.cuda.stream(s0): b0.copy_(a1, non_blocking=True)   # pull 1 -> 0 on GPU0's stream
        with torch.cuda.stream(s1): b1.copy_(a0, non_blocking=True)   # pull 0 -> 1
    torch.cuda.synchronize(0); torch.cuda.synchronize(1)
def one(k):
    for _ in range(k):
        with torch.cuda.stream(s0): b0.copy_(a1, non_blocking=True)
    torch.cuda.synchronize(0)
for name, f in (("one way", one), ("both ways", both)):
    f(5); t = time.perf_counter(); f(50); dt = (time.perf_counter() - t) / 50
    print(f"{name}: 32 MB in {dt*1e6:.1f} us = {n/dt/1e9:.0f} GB/s per direction")
