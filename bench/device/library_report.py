#!/usr/bin/env python3
"""Tables of a library_h200x2.sh run: the runtime's all-reduce with its
hand-generated PTX kernels (before) and with the kernels the compiler
generates (after), rounds interleaved in one device call, each variant's
median over the rounds; the compiled all-reduce before and after; torch's
symm_mem and NCCL from the same call; the fused RMSNorm before and after.

usage: library_report.py DIR   (the run's runtime-*.jsonl, compiled-*.jsonl, torch.jsonl)
"""
import json
import statistics
import sys
from pathlib import Path

folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")


def rounds(name, key):
    """The rows of `name`.jsonl carrying `key`, split into rounds."""
    rows = [json.loads(line) for line in (folder / f"{name}.jsonl").read_text().splitlines()
            if line.startswith("{")]
    rows = [r for r in rows if key in r]
    per = len({r[key] for r in rows})
    return [rows[i:i + per] for i in range(0, len(rows), per)]


def size(n):
    return f"{n} B" if n < 1024 else f"{n // 1024} KB" if n < 1 << 20 else f"{n >> 20} MB"


def med(rs, i, field):
    return statistics.median(r[i][field] for r in rs)


VARIANTS = ("one_shot", "two_shot", "two_shot_inplace")
before, after = rounds("runtime-before", "numel"), rounds("runtime-after", "numel")
cbefore, cafter = rounds("compiled-before", "numel"), rounds("compiled-after", "numel")
torch = {r["bytes"]: r for r in rounds("torch", "numel")[0]}
ctext = "compiled_text" if "compiled_text_cg_us" in cbefore[0][0] else "compiled_ir"
print(f"Runtime library (median of {len(before)} interleaved rounds, µs; after/before per variant):\n")
print("| size | mode | " + " | ".join(f"{v} before | after | ratio" for v in VARIANTS)
      + " | library best | compiled before | compiled after | torch symm_mem best | NCCL | torch / library |")
print("|---:|---|" + "---:|" * (3 * len(VARIANTS) + 6))
for i, row in enumerate(after[0]):
    n = row["bytes"]
    for mode, key in (("eager", "eager"), ("graph", "cg")):
        cells, best = [], float("inf")
        for v in VARIANTS:
            b, a = med(before, i, f"symm_{v}_{key}_us"), med(after, i, f"symm_{v}_{key}_us")
            best = min(best, a)
            cells.append(f"{b:.2f} | {a:.2f} | {a / b:.3f}")
        cb, ca = med(cbefore, i, f"{ctext}_{key}_us"), med(cafter, i, f"compiled_ir_{key}_us")
        t = torch[n]
        tb = min(t[f"one_shot_{key}_us"], t[f"two_shot_{key}_us"])
        print(f"| {size(n)} | {mode} | " + " | ".join(cells)
              + f" | {best:.2f} | {cb:.2f} | {ca:.2f} | {tb:.2f} | {t[f'nccl_{key}_us']:.2f} | {tb / best:.2f} |")
if "symm_one_shot_marginal_us" in after[0][0]:
    print("\nMarginal cost of one more all-reduce in a graph (graph of 11 calls against 1, per call; "
          "the compiled benchmark's measure), after, median µs:\n")
    chain = "symm_one_shot_chain_marginal_us" in after[0][0]
    print("| size | " + " | ".join(f"library {v}" for v in VARIANTS)
          + (" | library one_shot chained" if chain else "")
          + " | library best | compiled (same IR) | library best / compiled |")
    print("|---:|" + "---:|" * (len(VARIANTS) + 3 + chain))
    for i, row in enumerate(after[0]):
        cells = [med(after, i, f"symm_{v}_marginal_us") for v in VARIANTS]
        if chain:
            cells.append(med(after, i, "symm_one_shot_chain_marginal_us"))
        ca = med(cafter, i, "compiled_ir_cg_us")
        print(f"| {size(row['bytes'])} | " + " | ".join(f"{c:.2f}" for c in cells)
              + f" | {min(cells):.2f} | {ca:.2f} | {min(cells) / ca:.3f} |")
nb, na = rounds("runtime-before", "rmsnorm_rows"), rounds("runtime-after", "rmsnorm_rows")
print("\nFused all-reduce + RMSNorm, rows of 4096 bf16 (median µs):\n")
print("| rows | mode | fused before | fused after | after / before | unfused after | fused / unfused |")
print("|---:|---|---:|---:|---:|---:|---:|")
for i, row in enumerate(na[0]):
    for mode, key in (("eager", "eager"), ("graph", "cg")):
        b, a = med(nb, i, f"fused_{key}_us"), med(na, i, f"fused_{key}_us")
        apart = med(na, i, f"apart_{key}_us")
        print(f"| {row['rmsnorm_rows']} | {mode} | {b:.2f} | {a:.2f} | {a / b:.3f} | {apart:.2f} | {a / apart:.2f} |")
