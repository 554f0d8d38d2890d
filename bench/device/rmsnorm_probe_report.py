#!/usr/bin/env python3
"""Table of a rmsnorm_probe.sh run: the fused all-reduce + RMSNorm before
(hand-generated PTX) and with kernel_ir::HELD = 0 and 1, median of the
interleaved rounds.

usage: rmsnorm_probe_report.py DIR   (its runtime-{before,held0,held1}.jsonl)
"""
import json
import statistics
import sys
from pathlib import Path

folder = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
VARIANTS = ("before", "held0", "held1")
rows = {v: [json.loads(line) for line in (folder / f"runtime-{v}.jsonl").read_text().splitlines()
            if line.startswith("{")] for v in VARIANTS}


def med(variant, count, field):
    return statistics.median(r[field] for r in rows[variant] if r.get("rmsnorm_rows") == count)


print("| rows | mode | before | HELD=0 | HELD=1 | HELD=0 / before | HELD=1 / before |")
print("|---:|---|---:|---:|---:|---:|---:|")
for count in sorted({r["rmsnorm_rows"] for r in rows["before"] if "rmsnorm_rows" in r}):
    for mode, key in (("eager", "eager"), ("graph", "cg")):
        b, h0, h1 = (med(v, count, f"fused_{key}_us") for v in VARIANTS)
        print(f"| {count} | {mode} | {b:.2f} | {h0:.2f} | {h1:.2f} | {h0 / b:.3f} | {h1 / b:.3f} |")
