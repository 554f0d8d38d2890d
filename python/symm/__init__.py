"""symm from PyTorch: compiled layers as torch custom ops.

    import symm, torch
    layer = symm.compile("examples/llama_mlp.mlir")      # or symm.load(".so", ".json")
    layer.llama_mlp(x, norm, w_gate, w_up, w_down, out)   # arguments in the header's order

`symm.compile` runs symm-compile (`$SYMM_COMPILE`, else `PATH`) and links
the object into a shared library against the runtime this package
bundles. Each entry point becomes the torch op
`torch.ops.symm.<library>_<entry>`: its real implementation enqueues the
compiled entry point on torch's current CUDA stream, and its fake one
checks the shapes, so a model calling it compiles with
`torch.compile(fullgraph=True)` and runs in CUDA graphs. Arguments are
checked first: a wrong count or type raises `TypeError`, a wrong dtype
`TypeError`, a wrong shape, device or layout `ValueError`, each naming the
argument. A failure of the runtime raises `SymmError` with its message.

The runtime joins beside torch.distributed when it is initialized (one
rank per process, under torchrun or symm-launch); `symm.runtime()` is the
process's, made at the first call. `Runtime` and `Layer` are the
lower-level ctypes interface; `Layer.prepare(*args)` checks and converts a
call's arguments once, for a loop that calls it again and again.
"""

from .compiler import compile, load
from .library import Library
from .runtime import Layer, PreparedCall, Runtime, SymmError, runtime, runtime_library_path

__all__ = [
    "compile",
    "load",
    "Library",
    "Layer",
    "PreparedCall",
    "Runtime",
    "SymmError",
    "runtime",
    "runtime_library_path",
]
