"""Issue 32 probe (session 8): tma_gemv.cu (the weight streamed by the TMA
through a ring of shared-memory stages, mma.sync) beside cuBLAS (torch.mm)
on a TP-2 rank's Llama-3-8B shapes, bf16, in CUDA graphs, weights rotated
past the L2. Checked against torch's f32 product (SiLU(gate)·up for the
pair).

    nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
        -o /tmp/tma_gemv.so bench/gemv_probe/tma_gemv.cu -lcuda
    python3 bench/gemv_probe/tma_probe.py /tmp/tma_gemv.so
"""

import ctypes
import itertools
import sys

import torch
import torch.nn.functional as F

from probe import timed

STAGES = {1: (4, 6, 8, 12), 2: (3, 4, 6, 8)}


def load(path):
    lib = ctypes.CDLL(path)
    lib.tma_launch.restype = ctypes.c_int
    lib.tma_launch.argtypes = [ctypes.c_int] * 5 + [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.c_void_p] * 3
    return lib


def main():
    lib = load(sys.argv[1])
    print(torch.cuda.get_device_name(), flush=True)
    for name, K, N, P in [("gate+up", 4096, 7168, 2), ("down", 7168, 4096, 1)]:
        nbytes = P * K * N * 2
        copies = max(2, (400 << 20) // nbytes + 1)
        ws = [[torch.randn(K, N, device="cuda").mul_(0.02).to(torch.bfloat16) for _ in range(P)] for _ in range(copies)]
        cat = [torch.cat(w, dim=1) if P == 2 else w[0] for w in ws]
        for M in (1, 16):
            x = torch.zeros(16, K, device="cuda", dtype=torch.bfloat16)
            x[:M] = torch.randn(M, K, device="cuda").to(torch.bfloat16)
            xm = x[:M]
            out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            work = torch.zeros(8, P, M, N, device="cuda", dtype=torch.float32)
            counters = torch.zeros(N // 64, device="cuda", dtype=torch.int32)
            reps = 4 * copies
            t_sep = timed(lambda i: [torch.mm(xm, w) for w in ws[i % copies]], reps)
            t_cat = timed(lambda i: torch.mm(xm, cat[i % copies]), reps)
            print(f"{name} M={M}: cuBLAS {t_sep:.1f} us ({nbytes / t_sep / 1e6:.2f} TB/s), one wide mm {t_cat:.1f} us ({nbytes / t_cat / 1e6:.2f} TB/s)", flush=True)
            w = ws[0]
            ref = xm.float() @ w[0].float()
            if P == 2:
                ref = F.silu(ref) * (xm.float() @ w[1].float())
            results = []
            for st, bk, cw, hint, S in itertools.product(STAGES[P], (64, 128, 256), (2, 4), (0, 1), (1, 2, 3, 4)):
                if P == 2 and S > 2:
                    continue
                stream = torch.cuda.current_stream().cuda_stream
                out.fill_(float("nan"))
                rc = lib.tma_launch(st, bk, P, cw, hint, x.data_ptr(), w[0].data_ptr(), w[-1].data_ptr(), out.data_ptr(), M, K, N, S, work.data_ptr(), counters.data_ptr(), stream)
                torch.cuda.synchronize()
                if rc != 0:
                    continue
                err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
                ok = "ok" if err < 2e-2 else f"WRONG {err:.3g}"

                def fn(i, st=st, bk=bk, cw=cw, hint=hint, S=S):
                    wi = ws[i % copies]
                    lib.tma_launch(st, bk, P, cw, hint, x.data_ptr(), wi[0].data_ptr(), wi[-1].data_ptr(), out.data_ptr(), M, K, N, S, work.data_ptr(), counters.data_ptr(), torch.cuda.current_stream().cuda_stream)

                results.append((timed(fn, reps), st, bk, cw, hint, S, ok))
            results.sort()
            wrong = [r for r in results if r[-1] != "ok"]
            print(f"  {len(results)} variants, {len(wrong)} wrong" + (f" (e.g. {wrong[0]})" if wrong else ""), flush=True)
            for t, st, bk, cw, hint, S, ok in results[:12]:
                print(f"  tma stages={st:2d} BK={bk:3d} CW={cw} hint={hint} S={S}: {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s, {t_sep / t:.2f}x cuBLAS, {t_cat / t:.2f}x wide) {ok}", flush=True)
        del ws, cat


if __name__ == "__main__":
    main()
