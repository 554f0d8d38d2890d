"""Issue 32 probe: regmma.cu (weights streamed into registers, mma.sync)
beside cuBLAS (torch.mm) on a TP-2 rank's Llama-3-8B shapes, bf16, in CUDA
graphs, weights rotated past the L2.

    nvcc -O3 -arch=sm_90a -shared -Xcompiler -fPIC -o /tmp/regmma.so bench/gemv_probe/regmma.cu
    python3 bench/gemv_probe/probe.py /tmp/regmma.so
"""

import ctypes
import itertools
import sys

import torch
import torch.nn.functional as F



def load(path):
    lib = ctypes.CDLL(path)
    lib.regmma_launch.restype = ctypes.c_int
    lib.regmma_launch.argtypes = [ctypes.c_int] * 3 + [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.c_void_p] * 3
    return lib


def timed(fn, reps):
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        for i in range(reps):
            fn(i)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph, stream=stream):
        for i in range(reps):
            fn(i)
    graph.replay()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        graph.replay()
        e.record()
        torch.cuda.synchronize()
        best = min(best, s.elapsed_time(e) * 1000 / reps)
    return best


def main():
    lib = load(sys.argv[1])
    print(torch.cuda.get_device_name(), flush=True)
    shapes = [("gate+up", 4096, 7168, 2), ("down", 7168, 4096, 1)]
    for name, K, N, P in shapes:
        nbytes = P * K * N * 2
        copies = max(2, (400 << 20) // nbytes + 1)
        ws = [[torch.randn(K, N, device="cuda").mul_(0.02).to(torch.bfloat16) for _ in range(P)] for _ in range(copies)]
        cat = [torch.cat(w, dim=1) if P == 2 else w[0] for w in ws]
        for M in (1, 16):
            x = torch.randn(M, K, device="cuda").to(torch.bfloat16)
            out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            work = torch.zeros(16, P, M, N, device="cuda", dtype=torch.float32)
            counters = torch.zeros(N // 64, device="cuda", dtype=torch.int32)
            reps = 4 * copies
            # cuBLAS: as two calls (the generated-vs-cuBLAS choice today) and as one wide call.
            t_sep = timed(lambda i: [torch.mm(x, w) for w in ws[i % copies]], reps)
            t_cat = timed(lambda i: torch.mm(x, cat[i % copies]), reps)
            print(f"{name} M={M}: cuBLAS {t_sep:.1f} us ({nbytes / t_sep / 1e6:.2f} TB/s), one wide mm {t_cat:.1f} us ({nbytes / t_cat / 1e6:.2f} TB/s)", flush=True)
            # reference
            w = ws[0]
            ref = x.float() @ w[0].float()
            if P == 2:
                ref = F.silu(ref) * (x.float() @ w[1].float())
            results = []
            # U < 0: the permuted-K variant (A of two steps in one load).
            for W, U, S in itertools.product((4, 8, 16), (1, 2, -1), (1, 2, 3, 4, 6, 8)):
                if W // P < 1:
                    continue
                stream = torch.cuda.current_stream().cuda_stream
                if (K // 16) < S * W:
                    continue
                out.zero_()
                rc = lib.regmma_launch(W, U, P, x.data_ptr(), w[0].data_ptr(), w[-1].data_ptr(), out.data_ptr(), M, K, N, S, work.data_ptr(), counters.data_ptr(), stream)
                torch.cuda.synchronize()
                if rc != 0:
                    print(f"  W={W} U={U}: launch error {rc}")
                    continue
                err = ((out.float() - ref).abs().max() / ref.abs().max()).item()
                ok = "ok" if err < 2e-2 else f"WRONG {err:.3g}"

                def fn(i, W=W, U=U, S=S):
                    wi = ws[i % copies]
                    lib.regmma_launch(W, U, P, x.data_ptr(), wi[0].data_ptr(), wi[-1].data_ptr(), out.data_ptr(), M, K, N, S, work.data_ptr(), counters.data_ptr(), torch.cuda.current_stream().cuda_stream)

                t = timed(fn, reps)
                results.append((t, W, U, S, ok))
            results.sort()
            for t, W, U, S, ok in results[:10]:
                print(f"  regmma W={W:2d} U={U} S={S}: {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s, {t_sep / t:.2f}x cuBLAS) {ok}", flush=True)
            for t, W, U, S, ok in results:
                if S == 1:
                    print(f"  best S=1: W={W} U={U}: {t:.1f} us ({t_sep / t:.2f}x cuBLAS) {ok}", flush=True)
                    break
        del ws, cat


if __name__ == "__main__":
    main()
