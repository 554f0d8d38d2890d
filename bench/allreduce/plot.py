#!/usr/bin/env python3
"""Latency against size for symm, torch symm_mem and NCCL (eager and graph).

usage: plot.py SYMM.jsonl TORCH.jsonl OUT.png [MACHINE]   (needs matplotlib; MACHINE: "2x H200")
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return sorted((json.loads(line) for line in f if line.strip()), key=lambda r: r["bytes"])


def main():
    ours, theirs, out = load(sys.argv[1]), load(sys.argv[2]), sys.argv[3]
    machine = sys.argv[4] if len(sys.argv) > 4 else "2x H200"
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for ax, mode, title in zip(axes, ("eager", "cg"), ("eager", "in a CUDA graph")):
        series = [
            (ours, f"symm_one_shot_{mode}_us", "symm one-shot", "C0", "-"),
            (ours, f"symm_two_shot_{mode}_us", "symm two-shot", "C0", "--"),
            (ours, f"symm_two_shot_inplace_{mode}_us", "symm two-shot in place", "C0", ":"),
            (theirs, f"one_shot_{mode}_us", "torch one-shot", "C1", "-"),
            (theirs, f"two_shot_{mode}_us", "torch two-shot", "C1", "--"),
            (theirs, f"nccl_{mode}_us", "NCCL", "C2", "-"),
        ]
        for rows, key, label, color, style in series:
            xs = [r["bytes"] for r in rows if isinstance(r.get(key), (int, float))]
            ys = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
            ax.plot(xs, ys, style, color=color, marker="o", markersize=3, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes, bf16)")
        ax.set_title(f"all-reduce on {machine}, {title}")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("µs per all-reduce")
    axes[1].legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(out, dpi=120)


if __name__ == "__main__":
    main()
