"""Issue 32 probe (session 16): wgmma_gemm.cu (the weight as wgmma's A
operand, streamed by the TMA; the call's rows as its B operand, shared
by a cluster's blocks through TMA multicast where CL > 1) beside
cuBLAS (torch.mm) on a TP-2 rank's Llama-3-8B shapes, bf16, at 9 to 128
rows, in CUDA graphs, weights rotated past the L2. Checked against torch's
f32 product (SiLU(gate)·up for the pair).

    for p in 1 2; do for t in 16 32 64 128; do
      nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -shared -Xcompiler -fPIC \
          -DSEL_P=$p -DSEL_T=$t -o /tmp/wgmma_p${p}_t${t}.so bench/gemv_probe/wgmma_gemm.cu -lcuda &
    done; done; wait
    python3 bench/gemv_probe/wgmma_probe.py /tmp
"""

import ctypes
import itertools
import os
import sys

import torch
import torch.nn.functional as F

from probe import timed

TILES = (16, 32, 64, 128)
ROWS = [int(m) for m in os.environ.get("PROBE_ROWS", "16,9,64,100,128").split(",")]
# PROBE_ONLY=STAGES,BK,CG,CL,S,RAW: that variant alone, checked and not
# timed (for compute-sanitizer).
ONLY = tuple(int(v) for v in os.environ["PROBE_ONLY"].split(",")) if os.environ.get("PROBE_ONLY") else None
SHAPES = os.environ.get("PROBE_SHAPES", "gate+up,down").split(",")


def load(path):
    lib = ctypes.CDLL(path)
    lib.wgmma_launch.restype = ctypes.c_int
    lib.wgmma_launch.argtypes = [ctypes.c_int] * 7 + [ctypes.c_void_p] * 4 + [ctypes.c_int] * 4 + [ctypes.c_void_p] * 3
    return lib


def diagnose(lib, ws, copies, xm, out, work, counters, M, K, N, nbytes, reps):
    """Timing only (wrong results by design): the pair with `a` loaded once
    (diag 1), with no multiplies (diag 2), and split over K into f32
    partials that nothing sums (raw), to price each part of a stage."""
    for st, bk, cg, S, raw, diag in [(3, 128, 1, 1, 0, 0), (3, 128, 1, 1, 0, 1), (3, 128, 1, 1, 0, 2),
                                     (4, 64, 1, 1, 0, 0), (4, 64, 1, 1, 0, 1), (4, 64, 1, 1, 0, 2),
                                     (4, 64, 2, 2, 1, 0), (3, 64, 2, 2, 1, 0), (4, 64, 2, 1, 0, 0),
                                     (4, 64, 2, 1, 0, 1), (4, 64, 2, 1, 0, 2)]:
        def fn(i, st=st, bk=bk, cg=cg, S=S, raw=raw, diag=diag):
            wi = ws[i % copies]
            return lib.wgmma_launch(st, bk, cg, 1, 1, raw, diag, xm.data_ptr(), wi[0].data_ptr(), wi[-1].data_ptr(), out.data_ptr(), M, K, N, S, work.data_ptr(), counters.data_ptr(), torch.cuda.current_stream().cuda_stream)

        if fn(0) != 0:
            continue
        torch.cuda.synchronize()
        t = timed(fn, reps)
        what = {0: "as is", 1: "`a` loaded once", 2: "no multiplies"}[diag]
        print(f"  diag stages={st} BK={bk:3d} CG={cg} S={S}{' raw' if raw else ''}, {what}: {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s)", flush=True)


def main():
    libs = {(p, t): load(os.path.join(sys.argv[1], f"wgmma_p{p}_t{t}.so")) for p in (1, 2) for t in TILES}
    print(torch.cuda.get_device_name(), flush=True)
    wrong_total = 0
    for name, K, N, P in [("gate+up", 4096, 7168, 2), ("down", 7168, 4096, 1)]:
        if name not in SHAPES:
            continue
        nbytes = P * K * N * 2
        copies = max(2, (400 << 20) // nbytes + 1)
        ws = [[torch.randn(K, N, device="cuda").mul_(0.02).to(torch.bfloat16) for _ in range(P)] for _ in range(copies)]
        cat = [torch.cat(w, dim=1) if P == 2 else w[0] for w in ws]
        for M in ROWS:
            T = next(t for t in TILES if t >= M)
            lib = libs[(P, T)]
            xm = torch.randn(M, K, device="cuda").to(torch.bfloat16)
            out = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
            work = torch.zeros(8, P, M, N, device="cuda", dtype=torch.float32)
            counters = torch.zeros(N // 64, device="cuda", dtype=torch.int32)
            reps = 4 * copies
            t_sep = 1.0 if ONLY else timed(lambda i: [torch.mm(xm, w) for w in ws[i % copies]], reps)
            t_cat = 1.0 if ONLY else timed(lambda i: torch.mm(xm, cat[i % copies]), reps)
            print(f"{name} M={M} (T={T}): cuBLAS {t_sep:.1f} us ({nbytes / t_sep / 1e6:.2f} TB/s), one wide mm {t_cat:.1f} us ({nbytes / t_cat / 1e6:.2f} TB/s)", flush=True)
            w = ws[0]
            ref = xm.float() @ w[0].float()
            if P == 2:
                ref = F.silu(ref) * (xm.float() @ w[1].float())
            results = []
            shapes = [(1, 1), (1, 2), (1, 4), (2, 1)]
            for st, bk, (cg, cl), S, raw in itertools.product((3, 4, 6, 8), (64, 128), shapes, (1, 2, 4), (0, 1)):
                if (P == 2 and (S > 2 or raw)) or (raw and S == 1):
                    continue
                if ONLY is not None and (st, bk, cg, cl, S, raw) != ONLY:
                    continue
                stream = torch.cuda.current_stream().cuda_stream
                out.fill_(float("nan"))
                work.fill_(float("nan"))
                rc = lib.wgmma_launch(st, bk, cg, cl, 1, raw, 0, xm.data_ptr(), w[0].data_ptr(), w[-1].data_ptr(), out.data_ptr(), M, K, N, S, work.data_ptr(), counters.data_ptr(), stream)
                torch.cuda.synchronize()
                if rc != 0:
                    continue
                got = work[:S, 0].sum(0) if raw else out.float()
                err = ((got - ref).abs().max() / ref.abs().max()).item()
                ok = "ok" if err < 2e-2 else f"WRONG {err:.3g}"

                def fn(i, st=st, bk=bk, cg=cg, cl=cl, S=S, raw=raw):
                    wi = ws[i % copies]
                    lib.wgmma_launch(st, bk, cg, cl, 1, raw, 0, xm.data_ptr(), wi[0].data_ptr(), wi[-1].data_ptr(), out.data_ptr(), M, K, N, S, work.data_ptr(), counters.data_ptr(), torch.cuda.current_stream().cuda_stream)

                results.append((0.0 if ONLY else timed(fn, reps), st, bk, cg, cl, S, raw, ok))
            results.sort()
            wrong = [r for r in results if r[-1] != "ok"]
            wrong_total += len(wrong)
            print(f"  {len(results)} variants, {len(wrong)} wrong" + (f" (e.g. {wrong[0]})" if wrong else ""), flush=True)
            if P == 2 and os.environ.get("PROBE_DIAG"):
                diagnose(lib, ws, copies, xm, out, work, counters, M, K, N, nbytes, reps)
            shown, seen = [], set()
            for r in results:
                group = (r[3], r[4], r[5], r[6])  # cg, cl, S, raw: the best of each
                if len(shown) < 4 or group not in seen:
                    shown.append(r)
                seen.add(group)
            for t, st, bk, cg, cl, S, raw, ok in shown:
                print(f"  wgmma stages={st} BK={bk:3d} CG={cg} CL={cl} S={S}{' raw' if raw else ''}: {t:.1f} us ({nbytes / t / 1e6:.2f} TB/s, {t_sep / t:.2f}x cuBLAS, {t_cat / t:.2f}x wide) {ok}", flush=True)
        del ws, cat
    print(f"wrong variants: {wrong_total}", flush=True)


if __name__ == "__main__":
    main()
