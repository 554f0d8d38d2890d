// The Rust side of the Llama MLP: link the object symm-compile made from
// examples/llama_mlp.mlir into examples/rust/llama_mlp.rs with rustc against
// the runtime's rlib, the link `cargo build -p symm-examples` makes (its
// build.rs compiles through symm-build). Without a GPU it says so and
// exits 0; the device machine runs it (bench/results/*issue12*).
// REQUIRES: symm-compile, rustc
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %examples/llama_mlp.mlir -o %t/llama_mlp.o --emit=rust
// RUN: ar rcs %t/libllama_mlp.a %t/llama_mlp.o
// RUN: env OUT_DIR=%t %rustc-symm-runtime %examples/rust/llama_mlp.rs -L native=%t -l static=llama_mlp -o %t/llama_mlp
// RUN: llvm-nm %t/llama_mlp | FileCheck %s
// RUN: env -u RANK %t/llama_mlp %t > %t/run.txt 2>&1 || true
// RUN: FileCheck %s --check-prefix=START < %t/run.txt

// Both entry points, the runtime's side of them and the GPU wrappers.
// CHECK-DAG: T llama_mlp
// CHECK-DAG: T llama_mlp_async
// CHECK-DAG: T symm_rt_enter_async
// CHECK-DAG: T symm_rt_check_tokens
// CHECK-DAG: T mgpuLaunchKernel

// START: {{skipped: no CUDA device|llama_mlp: environment: RANK is not set}}
