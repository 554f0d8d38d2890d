"""symm.compile: an MLIR program to a Library (symm-compile, then a
shared library linked against the runtime this package bundles)."""

import os
import shutil
import subprocess
import tempfile

from .library import Library
from .runtime import runtime_library_path


def _compiler():
    given = os.environ.get("SYMM_COMPILE")
    if given:
        return given
    found = shutil.which("symm-compile")
    if found:
        return found
    raise FileNotFoundError(
        "symm-compile not found: install symm's tools (./dev install --prefix P, then put "
        "P/bin on PATH) or set SYMM_COMPILE to the symm-compile executable"
    )


def compile(source, out_dir=None, name=None, flags=()):
    """Compiles the MLIR program `source` (symm-compile, the same pipeline
    and options; `flags` adds options such as "--no-cuda-graphs") and
    links it into `out_dir`/lib<name>.so beside its header and signature
    file; returns the loaded Library. `name` defaults to the file's stem.
    A program that does not compile raises ValueError with symm-compile's
    diagnostics."""
    source = os.fspath(source)
    name = name or os.path.splitext(os.path.basename(source))[0]
    out_dir = out_dir or tempfile.mkdtemp(prefix=f"symm-{name}-")
    os.makedirs(out_dir, exist_ok=True)
    stem = os.path.join(out_dir, name)
    command = [_compiler(), source, "-o", f"{stem}.o", "--emit=signature", *flags]
    compiled = subprocess.run(command, capture_output=True, text=True)
    if compiled.returncode != 0:
        raise ValueError(f"{source} does not compile:\n{compiled.stderr.strip()}")
    runtime = os.path.abspath(runtime_library_path())
    if not os.path.isfile(runtime):
        raise FileNotFoundError(f"symm's runtime library is not at {runtime}: set SYMM_RUNTIME_LIB")
    library = os.path.join(out_dir, f"lib{name}.so")
    compiler = os.environ.get("CXX", "c++")
    linked = subprocess.run(
        [compiler, "-shared", "-o", library, f"{stem}.o", runtime,
         f"-Wl,-rpath,{os.path.dirname(runtime)}"],
        capture_output=True,
        text=True,
    )
    if linked.returncode != 0:
        raise RuntimeError(f"linking {library} failed:\n{linked.stderr.strip()}")
    os.remove(f"{stem}.o")
    return Library(library, f"{stem}.json", name=name)


def load(library, signature, name=None):
    """The Library of an already linked layer (lib<name>.so) and its
    signature file (symm-compile --emit=signature)."""
    return Library(library, signature, name=name)
