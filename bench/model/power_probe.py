"""Is the Llama MLP block power-bound on one GPU? Each workload replays a
CUDA graph of 20 calls (3 weight copies in turn, as the layer benches
run) for a few seconds while NVML samples the board's power, the SM and
memory clocks and the clock-event (throttle) reasons every 10 ms. Printed
per workload: µs per call (CUDA events over the whole loop), the median
and 90th-percentile power, the median and lowest SM clock, and the share
of samples with each throttle reason set.

Workloads, at world size 1 (symm-launch -n 1), for each token count:
  symm    the compiled block (LIB: examples/llama_mlp.mlir at D/F), with
          whatever SYMM_MATMUL says (the script runs it once per way);
  torch   the same block as torch ops in the graph (RMSNorm, the gate and
          up GEMMs, SiLU·up, the down GEMM, the residual): cuBLAS;
and once, `read`: cuBLAS at one row reading the block's weight bytes
(torch.mm, 1 x D @ D x 3F), a memory-bound reference.

    SYMM_RUNTIME_LIB=.../libsymm_runtime.so PYTHONPATH=python:bench/model \\
      symm-launch -n 1 python3 bench/model/power_probe.py LIB 4096 7168 \\
      [--tokens 1,16] [--seconds 3] [--skip-torch]

A diagnostic, not a check: it asserts nothing about the figures.
"""

import argparse
import os
import statistics
import threading
import time

import torch

# NVML's clock-event reasons (nvmlClocksEventReason*), by bit.
REASONS = {
    0x1: "idle",
    0x2: "app-clocks",
    0x4: "sw-power-cap",
    0x8: "hw-slowdown",
    0x10: "sync-boost",
    0x20: "sw-thermal",
    0x40: "hw-thermal",
    0x80: "hw-power-brake",
    0x100: "display-clocks",
}


class Sampler:
    """NVML samples of one GPU on a thread, between start() and stop()."""

    def __init__(self, index):
        import pynvml

        self.nvml = pynvml
        pynvml.nvmlInit()
        self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        self.samples = []
        self.running = False
        self.thread = None

    def limits(self):
        n, h = self.nvml, self.handle
        out = {}
        for name, query in [
            ("power limit W", lambda: n.nvmlDeviceGetEnforcedPowerLimit(h) / 1000),
            ("max SM MHz", lambda: n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_SM)),
            ("max mem MHz", lambda: n.nvmlDeviceGetMaxClockInfo(h, n.NVML_CLOCK_MEM)),
        ]:
            try:
                out[name] = query()
            except n.NVMLError as error:
                out[name] = f"n/a ({error})"
        return out

    def one(self):
        n, h = self.nvml, self.handle

        def get(query):
            try:
                return query()
            except n.NVMLError:
                return None

        reasons = get(lambda: n.nvmlDeviceGetCurrentClocksEventReasons(h))
        if reasons is None:
            reasons = get(lambda: n.nvmlDeviceGetCurrentClocksThrottleReasons(h))
        return (
            get(lambda: n.nvmlDeviceGetPowerUsage(h) / 1000),
            get(lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_SM)),
            get(lambda: n.nvmlDeviceGetClockInfo(h, n.NVML_CLOCK_MEM)),
            reasons,
            get(lambda: n.nvmlDeviceGetTemperature(h, n.NVML_TEMPERATURE_GPU)),
        )

    def loop(self):
        while self.running:
            self.samples.append(self.one())
            time.sleep(0.01)

    def start(self):
        self.samples = []
        self.running = True
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def stop(self):
        self.running = False
        self.thread.join()
        return self.samples


def summary(samples):
    """The samples' power, clocks and reasons as one line (the first
    quarter dropped: the power average still ramps there)."""
    kept = samples[len(samples) // 4 :]
    if not kept:
        return "no samples"

    def values(i):
        return [s[i] for s in kept if s[i] is not None]

    power, sm, mem, reasons, temp = (values(i) for i in range(5))
    parts = []
    if power:
        p = sorted(power)
        parts.append(f"power median {statistics.median(p):.0f} W, p90 {p[int(0.9 * (len(p) - 1))]:.0f} W")
    if sm:
        parts.append(f"SM clock median {statistics.median(sm):.0f} MHz, min {min(sm)}")
    if mem:
        parts.append(f"mem clock {statistics.median(mem):.0f} MHz")
    if temp:
        parts.append(f"temp {max(temp)} C")
    if reasons:
        shares = []
        for bit, name in REASONS.items():
            share = sum(1 for r in reasons if r & bit) / len(reasons)
            if share > 0:
                shares.append(f"{name} {100 * share:.0f}%")
        parts.append("reasons: " + (", ".join(shares) or "none"))
    return f"{len(kept)} samples: " + "; ".join(parts)


def rms_norm(h, weight):
    f = h.float()
    return (f * torch.rsqrt(f.pow(2).mean(-1, keepdim=True) + 1e-5) * weight.float()).to(h.dtype)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("library")
    parser.add_argument("D", type=int)
    parser.add_argument("F", type=int)
    parser.add_argument("--tokens", default="1,16")
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--copies", type=int, default=3)
    parser.add_argument("--skip-torch", action="store_true")
    parser.add_argument("--label", default=os.environ.get("SYMM_MATMUL", "measured"))
    args = parser.parse_args()
    D, F = args.D, args.F
    local = int(os.environ.get("LOCAL_RANK", "0"))
    torch.cuda.set_device(local)
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    index = int(visible.split(",")[local]) if visible else local
    sampler = Sampler(index)
    print("== device", torch.cuda.get_device_name(), sampler.limits(), flush=True)

    import symm

    runtime = symm.Runtime()
    layer = symm.Layer(runtime, args.library, "llama_mlp")
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    copies = [
        [normal(D, F, std=D**-0.5), normal(D, F, std=D**-0.5), normal(F, D, std=F**-0.5)]
        for _ in range(args.copies)
    ]
    stream = torch.cuda.Stream()

    def measure(label, one_call):
        """Replays a graph of 20 calls of `one_call(copy)` for the set
        time and prints µs per call with the samples' summary."""
        calls = 20
        with torch.cuda.stream(stream):
            for c in range(len(copies)):
                one_call(c)
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=stream):
            for c in range(calls):
                one_call(c % len(copies))
        graph.replay()
        torch.cuda.synchronize()
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        # A replay's length, to size the loop.
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        replays = max(10, int(args.seconds * 1000 / max(start.elapsed_time(end), 1e-3)))
        sampler.start()
        start.record()
        for _ in range(replays):
            graph.replay()
        end.record()
        end.synchronize()
        samples = sampler.stop()
        us = start.elapsed_time(end) * 1000 / (replays * calls)
        print(f"{label}: {us:.1f} us a call over {replays * calls} calls; {summary(samples)}",
              flush=True)

    sampler.start()
    time.sleep(1.0)
    print(f"idle: {summary(sampler.stop())}", flush=True)

    for m in [int(t) for t in args.tokens.split(",") if t]:
        x = normal(m, D, std=1.0)
        out = torch.empty_like(x)

        def symm_call(c):
            layer(m, x, norm, *copies[c], out)

        measure(f"symm ({args.label}) M={m}", symm_call)
        if args.skip_torch:
            continue

        def torch_call(c):
            w_gate, w_up, w_down = copies[c]
            xn = rms_norm(x, norm)
            act = torch.nn.functional.silu(xn @ w_gate) * (xn @ w_up)
            out.copy_(act @ w_down + x)

        measure(f"torch (cuBLAS, eager ops in the graph) M={m}", torch_call)

    if not args.skip_torch:
        one = normal(1, D, std=1.0)
        wide = [torch.cat([w[0], w[1], w[2].t()], dim=1).contiguous() for w in copies]
        sink = torch.empty(1, 3 * F, dtype=torch.bfloat16, device="cuda")

        def read_call(c):
            torch.mm(one, wide[c], out=sink)

        measure(f"read (cuBLAS 1 x {D} @ {D} x {3 * F}, the block's bytes)", read_call)
    runtime.close()


if __name__ == "__main__":
    main()
