"""A compiled library's entry points as torch custom ops."""

import ctypes
import os
import re

import torch
from torch._subclasses.fake_tensor import FakeTensor

from . import signature
from .runtime import SymmError, _runtime_library, on_torch_stream, runtime

_C_SCALARS = {
    "float": ctypes.c_float,
    "double": ctypes.c_double,
    "bool": ctypes.c_bool,
    "int8_t": ctypes.c_int8,
    "uint8_t": ctypes.c_uint8,
    "int16_t": ctypes.c_int16,
    "uint16_t": ctypes.c_uint16,
    "int32_t": ctypes.c_int32,
    "uint32_t": ctypes.c_uint32,
    "int64_t": ctypes.c_int64,
    "uint64_t": ctypes.c_uint64,
}

# Ops this process registered, by qualified name: a library is loaded once.
_REGISTERED = {}


class Entry:
    """One entry point: calling it checks the arguments, then runs the
    torch op (`self.op`), which enqueues the compiled entry point on
    torch's current CUDA stream."""

    def __init__(self, library, spec, function, op_name):
        self.library = library
        self.spec = spec
        self.function = function
        self.op_name = op_name
        self.__name__ = spec.name
        self.__doc__ = f"{spec.usage()}: {', '.join(a.mlir for a in spec.args)}"

    @property
    def op(self):
        """The torch op (torch.ops.symm.<library>_<entry>)."""
        return getattr(torch.ops.symm, self.op_name)

    def __call__(self, *args):
        # While torch.compile traces, the op's fake implementation checks
        # the arguments (checking here too would only add guards to every
        # call of the compiled model) and its real one their devices.
        if torch.compiler.is_compiling():
            return self.op(*args)
        device = None if _fake(args) else (torch.cuda.current_device() if torch.cuda.is_available() else -1)
        self.spec.check(args, device=device)
        return self.op(*args)

    def run(self, *args):
        """The op's real implementation: the compiled entry point, enqueued."""
        device = torch.cuda.current_device()
        tokens = self.spec.check(args, device=device)
        converted = []
        if self.spec.tokens:
            converted.append(ctypes.c_int64(tokens))
        for arg, value in zip(self.spec.args, args):
            if arg.kind == "scalar":
                converted.append(_C_SCALARS[arg.c](value))
            else:
                converted.append(ctypes.c_void_p(value.data_ptr()))
        handle = self.library.runtime().handle
        on_torch_stream(lambda stream: self._enqueue(handle, stream, converted))

    def _enqueue(self, handle, stream, converted):
        status = self.function(handle, ctypes.c_void_p(stream), *converted)
        if status != 0:
            raise SymmError(f"{self.spec.name}: {self.library.runtime().take_failure()}")


def _fake(args):
    return any(isinstance(a, FakeTensor) or (isinstance(a, torch.Tensor) and a.is_meta) for a in args)


class Library:
    """A compiled layer's shared library and its entry points (attributes
    named after them)."""

    def __init__(self, path, signature_path, name=None, process_runtime=None):
        self.path = os.path.abspath(path)
        self.name = name or _stem(path)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.name):
            raise ValueError(f"library name {self.name!r} is not an identifier: pass name=")
        self._runtime = process_runtime
        # The runtime first and global, so the layer's symm_rt_* calls resolve.
        _runtime_library()
        self.lib = ctypes.CDLL(self.path)
        self.entries = {}
        for spec in signature.read(signature_path):
            if not spec.asynchronous:
                raise ValueError(
                    f"{self.path}: {spec.name} has no asynchronous entry point, which its "
                    "torch op enqueues (it takes no runtime: it uses no symm collective or "
                    "kernel)"
                )
            try:
                function = getattr(self.lib, f"{spec.name}_async")
            except AttributeError as error:
                raise SymmError(f"{self.path} has no entry point {spec.name}_async") from error
            function.restype = ctypes.c_int32
            entry = Entry(self, spec, function, f"{self.name}_{spec.name}")
            _register(entry)
            self.entries[spec.name] = entry
            setattr(self, spec.name, entry)

    def runtime(self):
        if self._runtime is None:
            self._runtime = runtime()
        return self._runtime


def _stem(path):
    base = os.path.basename(path)
    base = base[3:] if base.startswith("lib") else base
    return base.split(".", 1)[0]


def _register(entry):
    qualified = f"symm::{entry.op_name}"
    if qualified in _REGISTERED:
        previous = _REGISTERED[qualified]
        if previous.library.path == entry.library.path:
            # The same library again: its op now runs this entry.
            previous.library, previous.function = entry.library, entry.function
            return
        raise ValueError(
            f"torch.ops.symm.{entry.op_name} is already {previous.library.path}'s: "
            "give this library another name (name=...)"
        )
    _REGISTERED[qualified] = entry
    torch.library.define(qualified, entry.spec.schema())

    def real(*args):
        entry.run(*args)

    def fake(*args):
        entry.spec.check(args)

    torch.library.impl(qualified, "CUDA", real)
    torch.library.register_fake(qualified, fake)
