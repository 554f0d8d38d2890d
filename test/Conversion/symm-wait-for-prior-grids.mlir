// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-wait-for-prior-grids)' | FileCheck %s

// Every kernel of a GPU module waits for the grids before it as its first
// op, and the module carries the marker global that tells the runtime its
// kernels may be launched programmatically. Functions that are not kernels
// do not wait, and a module without kernels gets no marker.
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.mlir.global external @symm_waits_for_prior_grids(1 : i8) {addr_space = 1 : i32} : i8
// CHECK: gpu.func @scale(%[[P:.*]]: memref<4xf32>) kernel
// CHECK-NEXT: nvvm.griddepcontrol  wait
// CHECK-NEXT: %[[T:.*]] = gpu.thread_id x
// CHECK: memref.store %{{.*}}, %[[P]][%[[T]]]
// CHECK: gpu.func @copy(%[[A:.*]]: memref<4xf32>, %[[B:.*]]: memref<4xf32>) kernel
// CHECK-NEXT: nvvm.griddepcontrol  wait
// CHECK-NEXT: %{{.*}} = arith.constant 0 : index
// CHECK: func.func @helper() {
// CHECK-NEXT: return
// CHECK-LABEL: gpu.module @no_kernels
// CHECK-NOT: symm_waits_for_prior_grids
// CHECK-NOT: griddepcontrol
gpu.module @kernels {
  gpu.func @scale(%p: memref<4xf32>) kernel {
    %t = gpu.thread_id x
    %two = arith.constant 2.0 : f32
    memref.store %two, %p[%t] : memref<4xf32>
    gpu.return
  }
  gpu.func @copy(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
    %c0 = arith.constant 0 : index
    %v = memref.load %a[%c0] : memref<4xf32>
    memref.store %v, %b[%c0] : memref<4xf32>
    gpu.return
  }
  func.func @helper() {
    return
  }
}

gpu.module @no_kernels {
  func.func @f() {
    return
  }
}
