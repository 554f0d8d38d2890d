"""Issue 32 probe, layout 2 (regmma2 in regmma.cu): a block's warps side by
side over contiguous columns, K split over the grid's y with f32 atomics.
Streaming speed only (no epilogue), beside cuBLAS and the floor's figures.

    python3 bench/gemv_probe/probe2.py /tmp/regmma.so
"""

import ctypes
import itertools
import sys

import torch

from probe import timed



def load(path):
    lib = ctypes.CDLL(path)
    lib.regmma2_launch.restype = ctypes.c_int
    lib.regmma2_launch.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] * 4 + [ctypes.c_int] * 5 + [ctypes.c_void_p]
    return lib


def main():
    lib = load(sys.argv[1])
    print(torch.cuda.get_device_name(), flush=True)
    for name, K, N, P in [("gate+up", 4096, 7168, 2), ("down", 7168, 4096, 1)]:
        nbytes = P * K * N * 2
        copies = max(2, (400 << 20) // nbytes + 1)
        ws = [[torch.randn(K, N, device="cuda").mul_(0.02).to(torch.bfloat16) for _ in range(P)] for _ in range(copies)]
        for M in (1, 16):
            x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
            work = torch.zeros(P, M, N, device="cuda", dtype=torch.float32)
            reps = 4 * copies
            t_lib = timed(lambda i: [torch.mm(x, w) for w in ws[i % copies]], reps)
            w = ws[0]
            ref = torch.stack([x.float() @ wi.float() for wi in w])
            results = []
            for W, C, U, S in itertools.product((4, 8, 16), (1, 2, 4, 8, 16), (1, 2, 4), (1, 2, 4, 8, 16, 32)):
                if C > W or (P * N // 64) % C or (K // 16) < 2 * S * (W // C):
                    continue
                stream = torch.cuda.current_stream().cuda_stream
                work.zero_()
                rc = lib.regmma2_launch(W, C, U, x.data_ptr(), w[0].data_ptr(), w[-1].data_ptr(), work.data_ptr(), M, K, N, P, S, stream)
                torch.cuda.synchronize()
                if rc != 0:
                    continue
                err = ((work - ref).abs().max() / ref.abs().max()).item()
                ok = "ok" if err < 2e-2 else f"WRONG {err:.3g}"

                def fn(i, W=W, C=C, U=U, S=S):
                    wi = ws[i % copies]
                    lib.regmma2_launch(W, C, U, x.data_ptr(), wi[0].data_ptr(), wi[-1].data_ptr(), work.data_ptr(), M, K, N, P, S, torch.cuda.current_stream().cuda_stream)

                results.append((timed(fn, reps), W, C, U, S, ok))
            results.sort()
            print(f"{name} M={M}: cuBLAS {t_lib:.1f} us ({nbytes / t_lib / 1e6:.2f} TB/s)", flush=True)
            for t, W, C, U, S, ok in results[:10]:
                print(f"  regmma2 W={W:2d} C={C:2d} U={U} S={S:2d}: {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s, {t_lib / t:.2f}x cuBLAS) {ok}", flush=True)
        del ws


if __name__ == "__main__":
    main()
