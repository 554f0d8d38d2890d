"""How steady the measured matmul choice is across processes (issue 32):
one process calls a compiled decoder half-layer once per token count
(LAYER_TOKENS, default 16), which times each matmul site's ways on that
first call; run with SYMM_LOG=info, the runtime prints each decision.

    SYMM_LOG=info SYMM_RUNTIME_LIB=build/layers/libsymm_runtime.so PYTHONPATH=python:bench/model \\
      torchrun --nproc_per_node=2 bench/model/choice_probe.py build/layers/libllama_decoder.so
"""

import os
import sys

import torch
import torch.distributed as dist

import llama_tp
import symm
from decoder_bench import attention_weights
from llama_tp import D


def main():
    s = llama_tp.setup()
    heads, w_o, next_norm = attention_weights(s)
    runtime = symm.Runtime()
    layer = symm.Layer(runtime, sys.argv[1], "llama_decoder")
    for m in [int(t) for t in os.environ.get("LAYER_TOKENS", "16").split(",")]:
        attn = s.normal(m, heads, std=1.0)
        x = s.normal(m, D, std=1.0)
        out, normed = torch.empty_like(x), torch.empty_like(x)
        layer(m, attn, w_o, x, s.norm, s.w_gate, s.w_up, s.w_down, next_norm, out, normed)
        torch.cuda.synchronize()
    runtime.close()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
