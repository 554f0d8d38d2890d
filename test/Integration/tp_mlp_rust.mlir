// The Rust side of the flow: link the object symm-compile made from
// examples/tp_mlp.mlir into examples/rust/tp_mlp.rs, with rustc against the
// runtime's rlib (the link `cargo build -p symm-examples` makes, whose
// build.rs compiles through symm-build), and run it. Without a GPU it says
// so and exits 0; on the device machine it runs under symm-launch.
// REQUIRES: symm-compile, rustc
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %examples/tp_mlp.mlir -o %t/tp_mlp.o --emit=rust
// RUN: llvm-readelf -S %t/tp_mlp.o | FileCheck %s --check-prefix=SECTIONS
// RUN: ar rcs %t/libtp_mlp.a %t/tp_mlp.o
// RUN: env OUT_DIR=%t %rustc-symm-runtime %examples/rust/tp_mlp.rs -L native=%t -l static=tp_mlp -o %t/tp_mlp
// RUN: llvm-nm %t/tp_mlp | FileCheck %s --check-prefix=SYMBOLS
// RUN: env -u RANK %t/tp_mlp > %t/run.txt 2>&1 || true
// RUN: FileCheck %s --check-prefix=START < %t/run.txt

// The constructor that loads the GPU module sits in .init_array: rustc links
// with lld, which never runs .ctors (the C++ app, linked by GNU ld, did).
// SECTIONS-NOT: .ctors
// SECTIONS: .init_array
// SECTIONS-NOT: .ctors

// The compiled entry, the runtime it calls and the MLIR GPU wrappers all
// ended up in one executable.
// SYMBOLS-DAG: T tp_mlp
// SYMBOLS-DAG: T symm_rt_enter_async
// SYMBOLS-DAG: T mgpuLaunchKernel

// START: {{skipped: no CUDA device|tp_mlp: environment: RANK is not set}}
