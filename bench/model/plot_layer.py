#!/usr/bin/env python3
"""Issue 14's plot: a layer's µs per call and its speed-up over torch's best variant, per token
count, from layer_bench.py's or decoder_bench.py's output (JSON lines; other lines are skipped;
several runs of a token count are reduced to their median).

usage: plot_layer.py BENCH.jsonl OUT.png [TITLE] [--floor US]   (needs matplotlib)

With torch.compile rows (torch_compile_best_us) their best is its own line; --floor US
draws the weight-read floor (bench/floor: the fastest streaming read of the layer's
weight bytes on the same GPU) as a horizontal line.
"""
import json
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# Issue 14's targets: ours / torch's best.
TARGETS = ((128, 1.2, "target 1.2x (M <= 128)"), (2048, 1.08, "target 1.08x (M = 2048)"))


def load(path):
    runs = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line.startswith("{"):
                continue
            row = json.loads(line)
            runs.setdefault(row["m"], []).append(row)
    return dict(sorted(runs.items()))


def color(i):
    """Ours: blue first, then colours other than torch's orange."""
    return ("C0", "C2", "C4", "C5", "C6")[i % 5]


def median(rows, key):
    values = [r[key] for r in rows if isinstance(r.get(key), (int, float))]
    return statistics.median(values) if values else None


def main():
    args = sys.argv[1:]
    floor = None
    if "--floor" in args:
        at = args.index("--floor")
        floor = float(args[at + 1])
        del args[at : at + 2]
    if len(args) < 2:
        sys.exit(__doc__)
    runs, out = load(args[0]), args[1]
    title = args[2] if len(args) > 2 else "Llama-3-8B TP 2 layer, 2x H200"
    if not runs:
        sys.exit(f"{args[0]}: no JSON lines")
    ms = list(runs)
    keys = sorted({k for rows in runs.values() for r in rows for k in r if k.endswith("_us")})
    ours = [k for k in keys if k.startswith("symm") and k != "torch_best_us"]
    keys = [k for k in keys if not k.startswith("torch_compile_best")]
    torch_graphs = [k for k in keys if k.startswith("torch_") and k.endswith("_cg_us")]
    fig, (times, ratios) = plt.subplots(1, 2, figsize=(13, 4.8))
    for key in torch_graphs:
        times.plot(ms, [median(runs[m], key) for m in ms], ":", color="0.6", linewidth=1)
    times.plot([], [], ":", color="0.6", label="torch variants (CUDA graphs)")
    times.plot(ms, [median(runs[m], "torch_best_us") for m in ms], "-", color="C1", marker="o",
               label="torch's best variant")
    if any(median(runs[m], "torch_compile_best_us") for m in ms):
        times.plot(ms, [median(runs[m], "torch_compile_best_us") for m in ms], "--", color="C3",
                   marker="s", label="torch.compile (Inductor) + CUDA graph")
    if floor is not None:
        times.axhline(floor, color="k", linestyle="-.", linewidth=1,
                      label=f"weight-read floor ({floor:.1f} µs)")
    for i, key in enumerate(ours):
        times.plot(ms, [median(runs[m], key) for m in ms], "-", color=color(i),
                   marker="o", label=key.removesuffix("_us").replace("_", " "))
    times.set_xscale("log", base=2)
    times.set_yscale("log")
    times.set_xlabel("M (tokens)")
    times.set_ylabel("µs per call")
    times.set_title(title)
    times.legend(fontsize=8)
    times.grid(True, which="both", alpha=0.3)
    width = 0.8 / max(1, len(ours))
    for i, key in enumerate(ours):
        speedups = []
        for m in ms:
            best, mine = median(runs[m], "torch_best_us"), median(runs[m], key)
            speedups.append(best / mine if best and mine else 0.0)
        xs = [j + (i - (len(ours) - 1) / 2) * width for j in range(len(ms))]
        bars = ratios.bar(xs, speedups, width, color=color(i),
                          label=key.removesuffix("_us").replace("_", " "))
        ratios.bar_label(bars, fmt="%.2fx", fontsize=7)
    for limit, target, label in TARGETS:
        covered = [j for j, m in enumerate(ms) if (m <= limit if limit == 128 else m == limit)]
        if covered:
            ratios.hlines(target, covered[0] - 0.45, covered[-1] + 0.45, colors="black",
                          linestyles="--")
            ratios.annotate(label, (covered[-1] + 0.45, target), fontsize=7, ha="right",
                            va="bottom")
    ratios.axhline(1.0, color="0.3", linewidth=0.8)
    ratios.set_ylim(bottom=0.8)
    ratios.set_xticks(range(len(ms)), [str(m) for m in ms])
    ratios.set_xlabel("M (tokens)")
    ratios.set_ylabel("torch's best / ours (higher: ours faster)")
    ratios.set_title("speed-up over torch's best variant, same device call")
    ratios.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(out, dpi=130)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
