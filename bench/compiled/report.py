#!/usr/bin/env python3
"""Markdown table: compiled all-reduce (bench/compiled) beside the runtime's
kernels (bench/allreduce) and the torch anchor, all from one device call.

usage: report.py COMPILED.jsonl RUNTIME.jsonl TORCH.jsonl
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "allreduce"))
from report import load, size  # noqa: E402  (bench/allreduce/report.py)


def main():
    compiled, runtime, torch = (load(p) for p in sys.argv[1:4])
    print("| size | mode | compiled | runtime (best kernel) | torch (best) | NCCL | torch / compiled |")
    print("|---:|---|---:|---:|---:|---:|---:|")
    for nbytes in sorted(compiled):
        for mode in ("eager", "cg"):
            ours = next(v for k, v in compiled[nbytes].items() if k.startswith("compiled_") and k.endswith(f"_{mode}_us"))
            rt = min(v for k, v in runtime[nbytes].items() if k.startswith("symm_") and k.endswith(f"_{mode}_us"))
            t = torch[nbytes]
            best = min(t[f"one_shot_{mode}_us"], t[f"two_shot_{mode}_us"])
            label = "graph" if mode == "cg" else "eager"
            print(f"| {size(nbytes)} | {label} | {ours:.1f} | {rt:.1f} | {best:.1f} | {t[f'nccl_{mode}_us']:.1f} | {best / ours:.2f} |")


if __name__ == "__main__":
    main()
