"""Issue 32 probe: cuBLAS (torch.bmm, f32 out as the split-K pass writes
its partials) running the down projection as S slices of K, the slices then
summed by the all-reduce; how the time falls with S at decode sizes.

    python3 bench/gemv_probe/split_k_slices.py
"""

import torch

from probe import timed


def main():
    print(torch.cuda.get_device_name(), flush=True)
    for K, N in [(7168, 4096), (14336, 4096)]:
        copies = 8
        ws = [torch.randn(K, N, device="cuda").mul_(0.02).to(torch.bfloat16) for _ in range(copies)]
        nbytes = K * N * 2
        for M in (1, 16, 128):
            x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
            line = [f"down {K}x{N} M={M}:"]
            for S in (1, 2, 4, 8, 16):
                xs = x.view(M, S, K // S).transpose(0, 1)  # [S, M, K/S], strided like the pass's slices
                out = torch.empty(S, M, N, device="cuda", dtype=torch.bfloat16)
                t = timed(lambda i: torch.bmm(xs, ws[i % copies].view(S, K // S, N), out=out), 4 * copies)
                line.append(f"S={S} {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s)")
            print("  ".join(line), flush=True)


if __name__ == "__main__":
    main()
