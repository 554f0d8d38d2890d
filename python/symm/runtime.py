"""The runtime through ctypes, and `Layer`, the plain call of a layer's
asynchronous entry point (symm.compile's ops are built on them).

A layer is the shared library of a compiled program (symm-compile's
object linked against libsymm_runtime.so, see python/build_layer.sh); its
asynchronous entry point runs on torch's current CUDA stream, on the
tensors' device memory, so it takes the place of the torch code it
replaces in a model (torch's legacy default stream included: the
runtime captures the layer's CUDA graphs on a stream of its own and
replays them on the legacy stream):

    import torch, torch.distributed as dist, symm
    dist.init_process_group("nccl")                 # under torchrun
    runtime = symm.Runtime()                        # its own store port
    layer = symm.Layer(runtime, "libllama_mlp.so", "llama_mlp")
    layer(tokens, x, norm, w_gate, w_up, w_down, out)   # header order

Arguments go in the order of the generated header (after the runtime
and the stream): Python ints as int64, tensors as device pointers. A
tensor must be contiguous and on this rank's CUDA device; a failure of the
layer raises `SymmError` with the runtime's message.
"""

import ctypes
import os
import socket

import torch

__all__ = ["Runtime", "Layer", "PreparedCall", "SymmError", "runtime", "runtime_library_path"]

_BUNDLED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "libsymm_runtime.so")


class SymmError(RuntimeError):
    """A failure the runtime reported (symm_last_error)."""


def runtime_library_path():
    """The runtime library this process loads: $SYMM_RUNTIME_LIB, else the
    one bundled with the package, else the loader's libsymm_runtime.so."""
    given = os.environ.get("SYMM_RUNTIME_LIB")
    if given:
        return given
    return _BUNDLED if os.path.isfile(_BUNDLED) else "libsymm_runtime.so"


def _runtime_library(path=None):
    # Global, so that the layers' libraries resolve their symm_rt_* calls.
    return ctypes.CDLL(path or runtime_library_path(), mode=ctypes.RTLD_GLOBAL)


def _free_port():
    with socket.socket() as s:
        s.bind(("", 0))
        return s.getsockname()[1]


def _store_port():
    """A port for the runtime's store that every rank agrees on: rank 0
    picks a free one and torch.distributed broadcasts it, so it never
    clashes with torch's own store on MASTER_PORT."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return None
    port = [_free_port() if dist.get_rank() == 0 else None]
    dist.broadcast_object_list(port, src=0)
    return port[0]


class Runtime:
    """symm's runtime for this rank (symm_init), joined beside
    torch.distributed when it is initialized."""

    def __init__(self, library=None):
        self.lib = _runtime_library(library)
        self.lib.symm_last_error.restype = ctypes.c_char_p
        self.lib.symm_init.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
        self.lib.symm_finalize.argtypes = [ctypes.c_void_p]
        self.lib.symm_status.argtypes = [ctypes.c_void_p]
        self.lib.symm_status.restype = ctypes.c_int
        port = _store_port()
        if port is not None:
            os.environ["SYMM_STORE_PORT"] = str(port)
        # The runtime uses the device torch uses for this rank.
        if torch.cuda.is_available():
            torch.cuda.init()
        handle = ctypes.c_void_p()
        if self.lib.symm_init(ctypes.byref(handle)) != 0:
            raise SymmError(self.last_error())
        self.handle = handle

    def last_error(self):
        message = self.lib.symm_last_error()
        return message.decode(errors="replace") if message else "unknown error"

    def take_failure(self):
        """The message of the asynchronous call that just failed, taken from
        the runtime (symm_status): the exception that carries it reports it,
        and the next call runs again, as after a C caller's symm_status."""
        message = self.last_error()
        self.lib.symm_status(self.handle)
        return message

    def close(self):
        if getattr(self, "handle", None):
            self.lib.symm_finalize(self.handle)
            self.handle = None

    def __del__(self):
        self.close()


# CU_STREAM_LEGACY (cuda.h's `((CUstream)0x1)`): the legacy default stream.
_LEGACY_STREAM = 1


def on_torch_stream(enqueue):
    """Calls `enqueue(stream)` with torch's current stream as a CUstream
    handle. torch's default stream is the legacy default stream (handle
    0, which the runtime takes as its own stream): it is passed as
    CU_STREAM_LEGACY, on which the runtime runs the call in order with
    torch's work and replays its CUDA graphs (capturing them on a stream of
    its own; it paces those replays, at most 4 queued by default
    (SYMM_LEGACY_GRAPHS_AHEAD): many graphs in turn there ran up to twice
    as slow with the host far ahead,
    bench/results/2026-11-28-legacy-replay-h200.md), or, where its first
    replays measure it faster, launches a graph's kernels one by one so that
    each call overlaps the drain of the one before (SYMM_GRAPH_REPLAY,
    bench/results/2026-11-28-replay-launches-h200x2.md).
    Every later reuse of the arguments' memory by torch's caching
    allocator is then ordered after the call, so the tensors need no
    `record_stream`. A side stream joined to torch's by an event each way
    cost 0-0.8 µs more per call on one-GPU H200 hosts and 5-12 µs on a 2x
    H200 host, whose Python loop it made fall behind the GPU
    (bench/results/2026-11-27-session23-h200x2.md)."""
    current = torch.cuda.current_stream().cuda_stream
    enqueue(current if current != 0 else _LEGACY_STREAM)


class Layer:
    """The asynchronous entry point `entry`_async of a layer's library."""

    def __init__(self, runtime, library, entry):
        self.runtime = runtime
        self.lib = ctypes.CDLL(library)
        try:
            self.function = getattr(self.lib, f"{entry}_async")
        except AttributeError as error:
            raise SymmError(f"{library} has no entry point {entry}_async") from error
        self.function.restype = ctypes.c_int32
        self.entry = entry

    def __call__(self, *args):
        device = torch.cuda.current_device()
        converted = self._converted(args, device)
        on_torch_stream(lambda stream: self._run(stream, converted))

    def prepare(self, *args):
        """This call's arguments checked and converted once: a `PreparedCall`
        whose calls pay only the checks and the entry point, as a
        serving loop replays a CUDA graph over the same buffers."""
        return PreparedCall(self, args)

    def _converted(self, args, device):
        """`args` checked (tensors contiguous on cuda:`device`, ints) and
        converted for ctypes."""
        converted = []
        for index, arg in enumerate(args):
            if isinstance(arg, torch.Tensor):
                if not arg.is_cuda or arg.get_device() != device:
                    raise SymmError(f"{self.entry}: argument {index} is not on cuda:{device}")
                if not arg.is_contiguous():
                    raise SymmError(f"{self.entry}: argument {index} is not contiguous")
                converted.append(ctypes.c_void_p(arg.data_ptr()))
            elif isinstance(arg, int):
                converted.append(ctypes.c_int64(arg))
            else:
                raise SymmError(
                    f"{self.entry}: argument {index} is a {type(arg).__name__}, "
                    "not a tensor or an int"
                )
        return converted

    def _run(self, stream, converted):
        status = self.function(self.runtime.handle, ctypes.c_void_p(stream), *converted)
        if status != 0:
            raise SymmError(f"{self.entry}: {self.runtime.take_failure()}")


def moved_argument(pointers):
    """The index of the first tensor among `pointers` ((index, tensor, data
    pointer) triples) whose data pointer is not the one recorded (its
    storage was resized or swapped), or None."""
    for index, tensor, pointer in pointers:
        if tensor.data_ptr() != pointer:
            return index
    return None


class PreparedCall:
    """A layer's call with fixed arguments (`Layer.prepare`), checked and
    converted once; it holds the tensors. Each call checks only that it runs
    on their device and that no tensor's storage moved (its data pointer),
    then calls the entry point on torch's stream: on 2x H200 hosts
    the decoder's call took 17-24 µs of host time this way against 21-34
    through `Layer.__call__` and 5 for the entry point alone
    (bench/results/2026-11-27-early-launch-rows-h200x2.md)."""

    def __init__(self, layer, args):
        self.layer = layer
        self.device = torch.cuda.current_device()
        self.converted = layer._converted(args, self.device)
        self.pointers = [(i, a, a.data_ptr()) for i, a in enumerate(args) if isinstance(a, torch.Tensor)]

    def __call__(self):
        if torch.cuda.current_device() != self.device:
            raise SymmError(f"{self.layer.entry}: prepared on cuda:{self.device}, called on another device")
        moved = moved_argument(self.pointers)
        if moved is not None:
            raise SymmError(
                f"{self.layer.entry}: argument {moved}'s storage moved since prepare(); prepare the call again"
            )
        on_torch_stream(self._run)

    def _run(self, stream):
        self.layer._run(stream, self.converted)


_PROCESS_RUNTIME = None


def runtime():
    """The process's runtime, made at the first call (symm_init: under
    torchrun or symm-launch, beside torch.distributed when it is
    initialized)."""
    global _PROCESS_RUNTIME
    if _PROCESS_RUNTIME is None:
        _PROCESS_RUNTIME = Runtime()
    return _PROCESS_RUNTIME
