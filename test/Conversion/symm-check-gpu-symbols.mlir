// RUN: symm-opt %s --split-input-file --verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(symm-check-gpu-symbols)'
// symm-check-gpu-symbols-linked.mlir: the same kernel with libdevice linked.

// Without libdevice, a kernel calling libdevice's expf (what math.exp
// lowers to) is refused at the call, naming the math op.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @k(%x: f32) -> f32 {
      // expected-error @+1 {{'math.exp' (lowered to a call to __nv_expf) needs libdevice, which was not found}}
      %y = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.return %y : f32
    }
  }
}

// -----

// A function nothing defines for the GPU is refused, libdevice or not.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @host_helper(f32) -> f32
    llvm.func @k(%x: f32) -> f32 {
      // expected-error @+1 {{calls host_helper, which nothing defines for the GPU}}
      %y = llvm.call @host_helper(%x) : (f32) -> f32
      llvm.return %y : f32
    }
  }
}

// -----

// Calls within the module are fine.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @helper(%x: f32) -> f32 {
      llvm.return %x : f32
    }
    llvm.func @k(%x: f32) -> f32 {
      %y = llvm.call @helper(%x) : (f32) -> f32
      llvm.return %y : f32
    }
  }
}
