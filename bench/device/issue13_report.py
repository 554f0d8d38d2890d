#!/usr/bin/env python3
"""Table of bench/results/2026-11-22-issue13-*: the compiled all-reduce with
kernels as MLIR text (before) and as device-op IR (after), rounds
interleaved in one device call, beside the runtime's kernels, torch's
symm_mem and NCCL from the same call; then the runtime's fused RMSNorm.

usage: issue13_report.py [PREFIX]   (PREFIX: bench/results/2026-11-22-issue13-)
"""
import json
import statistics
import sys
from pathlib import Path

prefix = sys.argv[1] if len(sys.argv) > 1 else "bench/results/2026-11-22-issue13-"


def load(name):
    path = Path(f"{prefix}{name}-h200x2.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def rounds(kind):
    found = []
    for n in range(1, 10):
        try:
            found.append(load(f"ar-{kind}-{n}"))
        except FileNotFoundError:
            break
    return found


def size(n):
    return f"{n} B" if n < 1024 else f"{n // 1024} KB" if n < 1 << 20 else f"{n >> 20} MB"


before, after = rounds("before"), rounds("after")
runtime = load("ar-runtime")
kernels = {r["bytes"]: r for r in runtime if "numel" in r}
torch = {r["bytes"]: r for r in load("ar-torch")}
print("| size | mode | before: text kernels, median (runs) | after: device-op IR, median (runs) "
      "| after / before | runtime library, best kernel | torch symm_mem, best | NCCL | torch / after |")
print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
for i, row in enumerate(after[0]):
    n = row["bytes"]
    for mode, key in (("eager", "eager"), ("graph", "cg")):
        b = [r[i][f"compiled_text_{key}_us"] for r in before]
        a = [r[i][f"compiled_ir_{key}_us"] for r in after]
        mb, ma = statistics.median(b), statistics.median(a)
        lib = min(kernels[n][f"symm_{k}_{key}_us"] for k in ("one_shot", "two_shot", "two_shot_inplace"))
        t = torch[n]
        best = min(t[f"one_shot_{key}_us"], t[f"two_shot_{key}_us"])
        runs = lambda xs: " / ".join(f"{x:.2f}" for x in xs)
        print(f"| {size(n)} | {mode} | {mb:.2f} ({runs(b)}) | {ma:.2f} ({runs(a)}) | {ma / mb:.3f} "
              f"| {lib:.2f} | {best:.2f} | {t[f'nccl_{key}_us']:.2f} | {best / ma:.2f} |")
print()
print("| rows of 4096 bf16 | runtime fused all-reduce + residual + RMSNorm, graph (µs) | unfused | fused / unfused |")
print("|---:|---:|---:|---:|")
for r in runtime:
    if "rmsnorm_rows" in r:
        print(f"| {r['rmsnorm_rows']} | {r['fused_cg_us']:.2f} | {r['apart_cg_us']:.2f} | "
              f"{r['fused_cg_us'] / r['apart_cg_us']:.2f} |")
