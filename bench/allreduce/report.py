#!/usr/bin/env python3
"""Markdown table of a bench/allreduce run beside the torch anchor run.

usage: report.py SYMM.jsonl TORCH.jsonl
"""
import json
import sys


def load(path):
    with open(path) as f:
        return {row["bytes"]: row for row in map(json.loads, filter(str.strip, f))}


def size(nbytes):
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if nbytes >= scale:
            return f"{nbytes // scale} {unit}"
    return f"{nbytes} B"


def main():
    ours, theirs = load(sys.argv[1]), load(sys.argv[2])
    print("| size | mode | symm one-shot | symm two-shot | symm two-shot in place | torch one-shot | torch two-shot (in place) | NCCL (in place) | best torch / best symm |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for nbytes in sorted(ours):
        for mode in ("eager", "cg"):
            s1 = ours[nbytes][f"symm_one_shot_{mode}_us"]
            s2 = ours[nbytes][f"symm_two_shot_{mode}_us"]
            # Runs before the push two-shot had no in-place column.
            s3 = ours[nbytes].get(f"symm_two_shot_inplace_{mode}_us", float("nan"))
            t = theirs.get(nbytes, {})
            t1, t2, nccl = (t.get(f"{k}_{mode}_us") for k in ("one_shot", "two_shot", "nccl"))
            best_torch = min(x for x in (t1, t2) if isinstance(x, (int, float)))
            ratio = best_torch / min(x for x in (s1, s2, s3) if x == x)
            label = "graph" if mode == "cg" else "eager"
            print(f"| {size(nbytes)} | {label} | {s1:.1f} | {s2:.1f} | {s3:.1f} | {t1:.1f} | {t2:.1f} | {nccl:.1f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
