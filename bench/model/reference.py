"""Weights, inputs and f32 references for the Llama-3-8B layer examples.

Writes into DIR, as raw little-endian files:
  x.bin            2048 x 4096 bf16   the residual stream (the first M rows are used)
  norm_weight.bin  4096 bf16          the MLP's RMSNorm weight
  w_gate.bin, w_up.bin  4096 x 14336 bf16 (full; each rank takes its columns)
  w_down.bin       14336 x 4096 bf16  (each rank takes its rows)
  attn.bin         2048 x 4096 bf16   attention output before the projection
  w_o.bin          4096 x 4096 bf16   (each rank takes its rows)
  norm_weight_2.bin 4096 bf16         the next layer's RMSNorm weight
  mlp_ref_mM.bin, attn_ref_residual_mM.bin, attn_ref_normed_mM.bin   M x 4096 f32
  decoder_ref_out_mM.bin, decoder_ref_normed_mM.bin  M x 4096 f32: examples/llama_decoder.mlir
                   (norm_weight_2 after attention, norm_weight as the next layer's)
  x_calls_mM.bin   N x M x 4096 bf16  N inputs for examples/partitioned.mlir
  partitioned_h_mM.bin, partitioned_scale_mM.bin, partitioned_ref_mM.bin
                   N x M x 4096, N, N x M x 4096 f32: its first block's output,
                   the host step's scale and its output, per call (--partitioned)

The references are the unsharded layers computed by torch in f32 from the
same bf16 values (on the GPU when there is one), independent of symm: no
tensor parallelism, no bf16 intermediates. The apps compare against them
with bf16 tolerances (examples/cpp/llama_common.h).

  python3 bench/model/reference.py --out DIR [--m 1 16 128 2048] [--partitioned]
"""

import argparse
import os

import torch

D, F, M_MAX, EPS = 4096, 14336, 2048, 1e-5


def rmsnorm(x, weight):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * weight


def mlp(x, norm, w_gate, w_up, w_down):
    xn = rmsnorm(x, norm)
    return x + (torch.nn.functional.silu(xn @ w_gate) * (xn @ w_up)) @ w_down


def attn_out(attn, w_o, residual_in, norm):
    residual = residual_in + attn @ w_o
    return residual, rmsnorm(residual, norm)


def decoder(attn, w_o, residual_in, post_norm, w_gate, w_up, w_down, next_norm):
    """examples/llama_decoder.mlir: the attention output block, then the MLP
    block on its residual stream (normalized by post_norm), then the next
    layer's RMSNorm. Returns (out, normed)."""
    h, _ = attn_out(attn, w_o, residual_in, post_norm)
    out = mlp(h, post_norm, w_gate, w_up, w_down)
    return out, rmsnorm(out, next_norm)


def partitioned(x, norm, w_gate, w_up, w_down):
    """examples/partitioned.mlir: h = MLP(x), stored in bf16 as the program
    does; on the host s = 1 / sqrt(mean(h[last]^2) + 1e-6) per call (the
    last token's row); out = MLP(h * s), its input stored in bf16.
    x: calls x M x D. Returns (h, s, out)."""
    h = mlp(x, norm, w_gate, w_up, w_down).bfloat16().float()
    s = torch.rsqrt(h[:, -1:, :].pow(2).mean(-1, keepdim=True) + 1e-6)
    y = (h * s).bfloat16().float()
    return h, s, mlp(y, norm, w_gate, w_up, w_down)


# Calls per token count that examples/cpp/partitioned.cpp checks.
PARTITIONED_CALLS = {1: 10, 16: 100, 128: 10}


def save(path, tensor):
    tensor = tensor.contiguous().cpu()
    if tensor.dtype == torch.bfloat16:
        tensor = tensor.view(torch.int16)
    tensor.numpy().tofile(path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--m", type=int, nargs="+", default=[1, 16, 128, 2048])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--partitioned", action="store_true",
                        help="also inputs and references for examples/partitioned.mlir")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    g = torch.Generator(device="cpu").manual_seed(args.seed)

    def normal(*shape, std=1.0):
        return (torch.randn(*shape, generator=g) * std).to(torch.bfloat16)

    weights = {
        "x": normal(M_MAX, D),
        "norm_weight": (1.0 + normal(D, std=0.1).float()).to(torch.bfloat16),
        "w_gate": normal(D, F, std=D**-0.5),
        "w_up": normal(D, F, std=D**-0.5),
        "w_down": normal(F, D, std=F**-0.5),
        "attn": normal(M_MAX, D),
        "w_o": normal(D, D, std=D**-0.5),
        "norm_weight_2": (1.0 + normal(D, std=0.1).float()).to(torch.bfloat16),
    }
    for name, tensor in weights.items():
        save(os.path.join(args.out, f"{name}.bin"), tensor)
    w = {name: t.to(device).float() for name, t in weights.items()}
    torch.backends.cuda.matmul.allow_tf32 = False
    for m in args.m:
        x = w["x"][:m]
        save(os.path.join(args.out, f"mlp_ref_m{m}.bin"),
             mlp(x, w["norm_weight"], w["w_gate"], w["w_up"], w["w_down"]))
        residual, normed = attn_out(w["attn"][:m], w["w_o"], x, w["norm_weight_2"])
        save(os.path.join(args.out, f"attn_ref_residual_m{m}.bin"), residual)
        save(os.path.join(args.out, f"attn_ref_normed_m{m}.bin"), normed)
        out, normed = decoder(w["attn"][:m], w["w_o"], x, w["norm_weight_2"], w["w_gate"],
                              w["w_up"], w["w_down"], w["norm_weight"])
        save(os.path.join(args.out, f"decoder_ref_out_m{m}.bin"), out)
        save(os.path.join(args.out, f"decoder_ref_normed_m{m}.bin"), normed)
    if args.partitioned:
        calls = torch.Generator(device="cpu").manual_seed(args.seed + 1)
        for m, n in PARTITIONED_CALLS.items():
            x = torch.randn(n, m, D, generator=calls).to(torch.bfloat16)
            save(os.path.join(args.out, f"x_calls_m{m}.bin"), x)
            h, s, out = partitioned(x.to(device).float(), w["norm_weight"], w["w_gate"],
                                    w["w_up"], w["w_down"])
            save(os.path.join(args.out, f"partitioned_h_m{m}.bin"), h)
            save(os.path.join(args.out, f"partitioned_scale_m{m}.bin"), s)
            save(os.path.join(args.out, f"partitioned_ref_m{m}.bin"), out)
    print(f"reference: wrote weights and M = {args.m} references to {args.out} ({device})")


if __name__ == "__main__":
    main()
