"""What bench/model's torch scripts share: the Llama-3-8B TP MLP block's
shapes, this rank's weight shards (every rank draws the full weights alike
from seed 0 and keeps its columns or rows), and the block in torch with
symm_mem's one-shot (the down projection written into the symmetric buffer)
or two-shot in place, gate and up as one GEMM or two.

LAYER_WIDTHS=D,F sets the hidden size D and the whole MLP width F (each of
W ranks holds F / W) for another model's block (Llama-3-8B's 4096,14336
unless set); the layer passed to the bench must be compiled at D and F / W
(bench/device/matmul_build.sh's TP_WORLDS layers)."""

import os
from types import SimpleNamespace

import torch
import torch.distributed as dist

EPS = 1e-5


def layer_widths(text):
    """The hidden size D and the whole MLP width F of LAYER_WIDTHS ("D,F",
    Llama-3-8B's when empty): positive whole numbers, or SystemExit."""
    if not text:
        return 4096, 14336
    parts = text.split(",")
    if len(parts) != 2 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise SystemExit(f"LAYER_WIDTHS={text}: two positive whole numbers, D,F (4096,14336)")
    return int(parts[0]), int(parts[1])


D, F = layer_widths(os.environ.get("LAYER_WIDTHS", ""))


def ours_first(text):
    """Whether a bench times our layers before torch's variants at each
    token count, from LAYER_ORDER ("torch_first", the default when empty,
    or "symm_first"), or SystemExit. At compute-bound sizes the variant
    timed first measured up to 30 µs faster on 2x H200
    (bench/results/2026-11-28-lamport-2m-h200x2.md)."""
    orders = {"": False, "torch_first": False, "symm_first": True}
    if text not in orders:
        raise SystemExit(f"LAYER_ORDER={text}: torch_first or symm_first")
    return orders[text]


def rmsnorm(x, weight):
    # torch's own fused op (what a torch model would call), for the fastest torch side.
    return torch.nn.functional.rms_norm(x, (D,), weight, EPS)


def compile_every_shape():
    """The benches compile one lambda per torch variant, and dynamo keys its
    cache by code object: every (variant, token count) is a recompilation
    of the same code. Past `recompile_limit` (8 by default) dynamo runs the
    function uncompiled, silently, so from the ninth shape on the
    "torch.compile" figures were eager torch in a CUDA graph (the runs of
    2026-11-25 and 2026-11-26 with more than two token counts). Raise the
    limit, and make a hit an error, so that an eager figure can never pass
    for Inductor's."""
    config = torch._dynamo.config
    config.recompile_limit = 1024
    config.accumulated_recompile_limit = 8192
    config.fail_on_recompile_limit_hit = True


def setup(blocks=("llama",)):
    """Joins torch.distributed (NCCL) and draws this rank's shards. With
    LAYER_BLOCK=gelu (for callers whose `blocks` name it) the block is the
    non-gated one of bench/model/gelu_mlp.mlir (GELU of the up projection;
    the gate weight is drawn but unused, so that the other weights are the
    same). With LAYER_BLOCK=linear the weights are also kept in nn.Linear's
    layout (`*_t`: [out_features, in_features], as Hugging Face checkpoints
    and vLLM store them), which torch's variants then multiply by with
    F.linear and bench/model/linear_mlp.mlir takes."""
    compile_every_shape()
    dist.init_process_group("nccl")
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", rank)))
    if F % world:
        raise SystemExit(f"the MLP width {F} does not split into {world} equal shards")
    shard = F // world
    g = torch.Generator(device="cuda").manual_seed(0)

    def normal(*shape, std):
        return (torch.randn(*shape, generator=g, device="cuda") * std).to(torch.bfloat16)

    cols = slice(rank * shard, (rank + 1) * shard)
    norm = (1 + normal(D, std=0.1).float()).to(torch.bfloat16)
    w_gate = normal(D, F, std=D**-0.5)[:, cols].contiguous()
    w_up = normal(D, F, std=D**-0.5)[:, cols].contiguous()
    w_down = normal(F, D, std=F**-0.5)[cols].contiguous()
    block = os.environ.get("LAYER_BLOCK", "llama")
    if block not in blocks:
        raise SystemExit(f"LAYER_BLOCK={block}: this bench takes {' or '.join(blocks)}")
    linear = block == "linear"
    return SimpleNamespace(
        block=block,
        rank=rank,
        world=world,
        device=torch.device("cuda", torch.cuda.current_device()),
        group=dist.group.WORLD.group_name,
        shard=shard,
        normal=normal,
        norm=norm,
        w_gate=w_gate,
        w_up=w_up,
        w_down=w_down,
        w_gate_up=torch.cat([w_gate, w_up], dim=1).contiguous(),
        w_gate_t=w_gate.t().contiguous() if linear else None,
        w_up_t=w_up.t().contiguous() if linear else None,
        w_down_t=w_down.t().contiguous() if linear else None,
        w_gate_up_t=torch.cat([w_gate.t(), w_up.t()]).contiguous() if linear else None,
    )


WEIGHTS = ("norm", "w_gate", "w_up", "w_down", "w_gate_up", "w_gate_t", "w_up_t", "w_down_t",
           "w_gate_up_t")


def weight_copy_count():
    """LAYER_WEIGHT_COPIES, 3 unless set: the benches' default since
    2026-11-28 (session 26); 1 (the same weights every call) reproduces
    the figures before, which flattered ours by 1-4 µs a call
    (bench/results/2026-11-28-weight-copies-h200x2.md)."""
    text = os.environ.get("LAYER_WEIGHT_COPIES", "3")
    if not text.isdigit() or int(text) < 1:
        raise SystemExit(f"LAYER_WEIGHT_COPIES={text}: a whole number of at least 1")
    return int(text)


def weight_copies(s, extra=()):
    """LAYER_WEIGHT_COPIES (3 unless set) namespaces like `s`, the first `s`
    itself and each further one with its own clone of every weight (and of
    the attributes named in `extra`), and a function that returns them in
    turn. A bench that calls one layer again and again on the same weights
    finds some of its weight lines still in L2 (60 MB on H200) from the call
    before; a model's next call of a layer comes after its other layers.
    With copies the benches' calls rotate through them, on every side
    alike, as a model's layers do (session 26 measured about 1 µs of the
    MLP block's gate/up pair at 16 rows from reuse)."""
    count = weight_copy_count()
    copies = [s]
    for _ in range(count - 1):
        clone = SimpleNamespace(**vars(s))
        for name in WEIGHTS + tuple(extra):
            value = getattr(s, name)
            setattr(clone, name, None if value is None else value.clone())
        copies.append(clone)
    turn = [0]

    def next_copy():
        copy = copies[turn[0] % count]
        turn[0] += 1
        return copy

    return copies, next_copy


def hidden(s, x, fused):
    """SiLU(gate) * up of RMSNorm(x), gate and up as one GEMM when `fused`
    (the gelu block: GELU(up), the tanh approximation, either way)."""
    xn = rmsnorm(x, s.norm)
    if s.block == "linear":
        linear = torch.nn.functional.linear
        if fused:
            gu = linear(xn, s.w_gate_up_t)
            return torch.nn.functional.silu(gu[:, : s.shard]) * gu[:, s.shard :]
        return torch.nn.functional.silu(linear(xn, s.w_gate_t)) * linear(xn, s.w_up_t)
    if s.block == "gelu":
        return torch.nn.functional.gelu(xn @ s.w_up, approximate="tanh")
    if fused:
        gu = xn @ s.w_gate_up
        return torch.nn.functional.silu(gu[:, : s.shard]) * gu[:, s.shard :]
    return torch.nn.functional.silu(xn @ s.w_gate) * (xn @ s.w_up)


def down_rhs(s):
    """The down projection's right-hand side: its k x n weight, or (linear)
    the transpose view of the n x k one."""
    return s.w_down_t.t() if s.block == "linear" else s.w_down


def nccl(s, x, fused):
    partial = hidden(s, x, fused) @ down_rhs(s)
    dist.all_reduce(partial)
    return x + partial


def one_shot(s, x, buf, fused):
    torch.mm(hidden(s, x, fused), down_rhs(s), out=buf)
    return x + torch.ops.symm_mem.one_shot_all_reduce(buf, "sum", s.group)


def two_shot(s, x, buf, fused):
    torch.mm(hidden(s, x, fused), down_rhs(s), out=buf)
    torch.ops.symm_mem.two_shot_all_reduce_(buf, "sum", s.group)
    return x + buf
