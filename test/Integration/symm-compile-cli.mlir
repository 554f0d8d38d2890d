// symm-compile's command line (clap): --help and --version print to
// stdout and exit 0; a bad command line prints the error and a pointer to
// the usage on stderr and exits 2 (checked with %python, as lit's shell
// has no $?).
//
// REQUIRES: symm-compile
// RUN: %symm-compile --help | FileCheck %s --check-prefix=HELP
// HELP: Usage: symm-compile [OPTIONS] <INPUT.mlir>
// HELP: -o <OUTPUT.o>
// HELP: --emit <KINDS>
// HELP: --one-shot-max-bytes <N>
// HELP-SAME: {{$}}
// HELP-NEXT: left out: 1 MiB on up to 2 ranks, 512 KiB on more
// HELP: --no-cuda-graphs
// HELP: --libdevice <PATH>

// RUN: %symm-compile --version | FileCheck %s --check-prefix=VERSION
// VERSION: symm-compile {{[0-9]+\.[0-9]+\.[0-9]+}}

// RUN: not %symm-compile %s --emit=asm 2>&1 | FileCheck %s --check-prefix=EMIT
// EMIT: error: invalid value 'asm' for '--emit <KINDS>'
// EMIT: [possible values: llvm, ptx, mlir, rust, signature]

// RUN: not %symm-compile %s --libdevice=x --no-libdevice 2>&1 | FileCheck %s --check-prefix=CONFLICT
// CONFLICT: error: the argument '--libdevice <PATH>' cannot be used with '--no-libdevice'

// RUN: %python -c "import subprocess, sys; r = subprocess.run([sys.argv[1], '--bogus'], capture_output=True); sys.exit(0 if r.returncode == 2 and b'Usage: symm-compile' in r.stderr else 1)" %symm-compile
// RUN: %python -c "import subprocess, sys; r = subprocess.run([sys.argv[1]], capture_output=True); sys.exit(0 if r.returncode == 2 else 1)" %symm-compile
