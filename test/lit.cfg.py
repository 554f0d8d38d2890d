# -*- Python -*-
# The symm lit suite. `cargo test` runs it through tools/symm-opt/tests/lit.rs,
# which passes the tool and LLVM directories as parameters; by hand:
#   lit -sv test --param symm_tools_dir=target/debug

import os
import shutil

import lit.formats
import lit.llvm
from lit.llvm.subst import ToolSubst

config.name = "symm"
config.suffixes = [".mlir"]
config.excludes = ["lit.cfg.py", "Inputs"]
config.test_source_root = os.path.dirname(__file__)

repo_root = os.path.dirname(config.test_source_root)
params = lit_config.params
config.symm_tools_dir = os.path.abspath(
    params.get("symm_tools_dir", os.path.join(repo_root, "target", "debug"))
)
config.llvm_tools_dir = params.get("llvm_tools_dir", "/usr/lib/llvm-22/bin")
config.test_exec_root = os.path.abspath(
    params.get("exec_root", os.path.join(repo_root, "target", "lit"))
)

lit.llvm.initialize(lit_config, config)
from lit.llvm import llvm_config  # noqa: E402, set by initialize()

config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)

if not os.path.exists(os.path.join(config.symm_tools_dir, "symm-opt")):
    lit_config.fatal(
        f"symm-opt not found in {config.symm_tools_dir}; build it with "
        "`cargo build -p symm-opt` or pass --param symm_tools_dir=DIR"
    )

# FileCheck, not, count, split-file from LLVM; %symm-opt and friends from us.
llvm_config.with_system_environment(["HOME", "TMPDIR"])
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("FILECHECK_OPTS", "--enable-var-scope --dump-input=fail")
llvm_config.use_default_substitutions()
llvm_config.add_tool_substitutions(
    [ToolSubst("symm-opt", unresolved="fatal")], [config.symm_tools_dir]
)
config.substitutions.append(("%examples", os.path.join(repo_root, "examples")))
config.substitutions.append(("%repo", repo_root))
config.substitutions.append(("%symm_tools_dir", config.symm_tools_dir))
# ptxas (./dev setup installs one in .deps/ptxas), to assemble the kernels.
ptxas = os.path.join(repo_root, ".deps", "ptxas", "ptxas")
if not os.access(ptxas, os.X_OK):
    ptxas = shutil.which("ptxas")
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))

# CMake, Ninja and pkg-config, for the installed package's test.
if all(shutil.which(tool) for tool in ("cmake", "ninja", "pkg-config")):
    config.available_features.add("cmake")

# symm-compile and the runtime library, for the Integration tests.
compile_tool = os.path.join(config.symm_tools_dir, "symm-compile")
runtime_lib = os.path.join(config.symm_tools_dir, "libsymm_runtime.a")
if os.path.exists(compile_tool) and os.path.exists(runtime_lib):
    config.available_features.add("symm-compile")
    config.substitutions.append(("%symm-compile", compile_tool))
    config.substitutions.append(("%symm_runtime_lib", runtime_lib))

# symm-kernels, to check the runtime's committed library kernels.
kernels_tool = os.path.join(config.symm_tools_dir, "symm-kernels")
if os.path.exists(kernels_tool):
    config.available_features.add("symm-kernels")
    config.substitutions.append(("%symm-kernels", kernels_tool))

# symm-pass-docs, to check the generated docs/passes.md.
docs_tool = os.path.join(config.symm_tools_dir, "symm-pass-docs")
if os.path.exists(docs_tool):
    config.available_features.add("symm-pass-docs")
    config.substitutions.append(("%symm-pass-docs", docs_tool))

# rustc against the runtime's rlib and its dependencies, as cargo would link
# a Rust app (the Rust integration test).
rustc = shutil.which("rustc")
runtime_rlib = os.path.join(config.symm_tools_dir, "libsymm_runtime.rlib")
if rustc and os.path.exists(runtime_rlib):
    config.available_features.add("rustc")
    config.substitutions.append((
        "%rustc-symm-runtime",
        f"{rustc} --edition 2024 --crate-type bin --extern symm_runtime={runtime_rlib} "
        f"-L dependency={os.path.join(config.symm_tools_dir, 'deps')}",
    ))
