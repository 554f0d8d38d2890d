"""A compiled library's entry points, from symm-compile's signature file
(`--emit=signature`: the same entry points as the C header), and the
checks of a call's arguments against them."""

import json

import torch

# MLIR element types to torch dtypes.
_DTYPES = {
    "bf16": torch.bfloat16,
    "f16": torch.float16,
    "f32": torch.float32,
    "f64": torch.float64,
    "i1": torch.bool,
    "i8": torch.int8,
    "si8": torch.int8,
    "ui8": torch.uint8,
    "i16": torch.int16,
    "si16": torch.int16,
    "i32": torch.int32,
    "si32": torch.int32,
    "i64": torch.int64,
    "si64": torch.int64,
    "index": torch.int64,
}

# C scalar types: (the op schema's type, the Python types accepted).
_SCALARS = {
    "float": ("float", (float, int)),
    "double": ("float", (float, int)),
    "bool": ("bool", (bool,)),
}
for _bits in (8, 16, 32, 64):
    _SCALARS[f"int{_bits}_t"] = ("int", (int,))
    _SCALARS[f"uint{_bits}_t"] = ("int", (int,))


class Arg:
    """One argument: a buffer (a tensor) or a scalar."""

    def __init__(self, spec, entry):
        self.name = spec["name"]
        self.kind = spec["kind"]
        self.mlir = spec.get("mlir", "")
        if self.kind == "buffer":
            element = spec["element"]
            if element not in _DTYPES:
                raise ValueError(f"{entry}: {self.name} has elements of type {element}, which torch has no dtype for")
            self.dtype = _DTYPES[element]
            self.shape = tuple(spec["shape"])
            self.written = bool(spec["written"])
            self.host = bool(spec.get("host", False))
        elif self.kind == "scalar":
            if spec["c"] not in _SCALARS:
                raise ValueError(f"{entry}: {self.name} is a {spec['c']}, which no op schema type takes")
            self.c = spec["c"]
            self.schema_type, self.python_types = _SCALARS[self.c]
        else:
            raise ValueError(f"{entry}: {self.name} is a {self.kind}, neither a buffer nor a scalar")

    @property
    def dynamic(self):
        return self.kind == "buffer" and len(self.shape) > 0 and self.shape[0] == -1


class EntryPoint:
    """An entry point of a compiled library."""

    def __init__(self, spec):
        self.name = spec["name"]
        self.takes_runtime = bool(spec["runtime"])
        self.asynchronous = bool(spec["async"])
        self.tokens = bool(spec["tokens"])
        self.max_tokens = spec.get("max_tokens")
        self.result = spec.get("result")
        self.args = [Arg(arg, self.name) for arg in spec["args"]]

    def usage(self):
        return f"{self.name}({', '.join(arg.name for arg in self.args)})"

    def check(self, args, device=None):
        """Checks `args` against the entry point; returns the token count (the
        dynamic leading size; None when there is none). `device`: the CUDA
        device index the tensors must be on (None: not checked, while torch
        traces with fake tensors; the real call checks it)."""
        if len(args) != len(self.args):
            raise TypeError(f"{self.usage()} takes {len(self.args)} arguments, got {len(args)}")
        tokens = None
        first_dynamic = None
        for arg, value in zip(self.args, args):
            where = f"{self.name}: argument {arg.name} ({arg.mlir})"
            if arg.kind == "scalar":
                if isinstance(value, bool) and bool not in arg.python_types:
                    raise TypeError(f"{where} must be {arg.schema_type}, got bool")
                if not isinstance(value, arg.python_types):
                    raise TypeError(f"{where} must be {arg.schema_type}, got {type(value).__name__}")
                continue
            if not isinstance(value, torch.Tensor):
                raise TypeError(f"{where} must be a torch.Tensor, got {type(value).__name__}")
            if value.dtype != arg.dtype:
                raise TypeError(f"{where} must be {arg.dtype}, got {value.dtype}")
            if value.dim() != len(arg.shape):
                raise ValueError(f"{where} must have {len(arg.shape)} dimensions, got shape {tuple(value.shape)}")
            for dim, (want, got) in enumerate(zip(arg.shape, value.shape)):
                if want != -1 and got != want:
                    raise ValueError(f"{where} must have shape {_shape(arg.shape)}, got {tuple(value.shape)}")
            if arg.dynamic:
                leading = value.shape[0]
                if tokens is None:
                    tokens, first_dynamic = leading, arg.name
                elif leading != tokens:
                    raise ValueError(
                        f"{where} has {leading} rows, but {first_dynamic} has {tokens}: "
                        "the ?x memrefs share the token count"
                    )
        if tokens is not None:
            if tokens < 1:
                raise ValueError(f"{self.name}: the token count ({first_dynamic}'s rows) must be at least 1, got {tokens}")
            if self.max_tokens is not None and tokens > self.max_tokens:
                raise ValueError(
                    f"{self.name}: {tokens} tokens ({first_dynamic}'s rows), above the "
                    f"{self.max_tokens} it was compiled for (symm_mem.max_tokens)"
                )
        # Where the tensors are, once what they are is right.
        for arg, value in zip(self.args, args):
            if device is None or arg.kind == "scalar":
                continue
            where = f"{self.name}: argument {arg.name} ({arg.mlir})"
            if arg.host:
                if value.is_cuda:
                    raise ValueError(f"{where} must be in pinned host memory, got {value.device}")
            elif not value.is_cuda:
                raise ValueError(f"{where} must be on a CUDA device, got {value.device}")
            elif value.device.index != device:
                raise ValueError(f"{where} must be on cuda:{device} (this rank's device), got {value.device}")
            if not value.is_contiguous():
                raise ValueError(f"{where} must be contiguous")
        return tokens

    def schema(self):
        """The torch op schema: tensors (written ones as mutable, each its own
        alias set) and scalars, no result (outputs are written in place)."""
        params = []
        written = 0
        for arg in self.args:
            if arg.kind == "scalar":
                params.append(f"{arg.schema_type} {arg.name}")
            elif arg.written:
                params.append(f"Tensor({_alias(written)}!) {arg.name}")
                written += 1
            else:
                params.append(f"Tensor {arg.name}")
        return f"({', '.join(params)}) -> ()"


def _alias(index):
    letters = "abcdefghijklmnopqrstuvwxyz"
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = letters[rest] + name
    return name


def _shape(shape):
    return "(" + ", ".join("tokens" if s == -1 else str(s) for s in shape) + ")"


def read(path):
    """The entry points in the signature file at `path`."""
    with open(path) as file:
        document = json.load(file)
    if document.get("generator") != "symm-compile":
        raise ValueError(f"{path} is not a symm-compile signature file")
    return [EntryPoint(spec) for spec in document["entry_points"]]
