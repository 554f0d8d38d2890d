// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-check-gpu-symbols{libdevice=true})' | FileCheck %s

// With libdevice linked, calls to its functions pass unchanged.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.call @__nv_expf
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @k(%x: f32) -> f32 {
      %y = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.return %y : f32
    }
  }
}
