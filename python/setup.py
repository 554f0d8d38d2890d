"""Bundles symm's runtime (libsymm_runtime.so) into the package.

`pip install ./python` takes the library from $SYMM_RUNTIME_LIB when set,
else builds it from the checkout this folder sits in (`cargo build
--release -p symm-runtime-clib`; the runtime needs no CUDA to build, it loads
the driver at run time). It is installed as symm/lib/<its SONAME>, the
name the layers that `symm.compile` links record, with a copy as
libsymm_runtime.so.
"""

import os
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
REPO = HERE.parent


def _soname(library):
    text = subprocess.run(
        ["readelf", "-d", str(library)], capture_output=True, text=True, check=True
    ).stdout
    for line in text.splitlines():
        if "soname: [" in line:
            return line.split("soname: [", 1)[1].split("]", 1)[0]
    raise RuntimeError(f"{library} has no SONAME")


def _runtime_library():
    given = os.environ.get("SYMM_RUNTIME_LIB")
    if given:
        path = Path(given)
        if not path.is_file():
            raise RuntimeError(f"SYMM_RUNTIME_LIB={given}: no such file")
        return path
    if not (REPO / "Cargo.toml").is_file():
        raise RuntimeError(
            "symm's runtime is not bundled: set SYMM_RUNTIME_LIB to a built "
            "libsymm_runtime.so, or install from a symm checkout (cargo builds it)"
        )
    subprocess.run(
        ["cargo", "build", "--release", "-p", "symm-runtime-clib"], cwd=REPO, check=True
    )
    return REPO / "target" / "release" / "libsymm_runtime.so"


class BuildWithRuntime(build_py):
    def run(self):
        super().run()
        library = _runtime_library()
        target = Path(self.build_lib) / "symm" / "lib"
        target.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(library, target / _soname(library))
        shutil.copyfile(library, target / "libsymm_runtime.so")


setup(cmdclass={"build_py": BuildWithRuntime})
