// RUN: symm-opt %s --symm-gpu-wait-grid-dependencies | FileCheck %s
// RUN: symm-opt %s --symm-gpu-wait-grid-dependencies --symm-gpu-wait-grid-dependencies | FileCheck %s

// Every kernel waits for the grids before it first thing; helpers do not
// (they run inside a kernel that has waited). The module gets the marker
// the runtime looks for before it launches with programmatic dependent
// launch. Running the pass twice changes nothing.
// CHECK-LABEL: gpu.module @kernels
// CHECK-NEXT: llvm.mlir.global external constant @symm_waits_for_grid_dependencies(1 : i32) {addr_space = 1 : i32} : i32
// CHECK-NOT: symm_waits_for_grid_dependencies
// CHECK-LABEL: func.func @helper(
// CHECK-NOT: nvvm.griddepcontrol
// CHECK: arith.addf
// CHECK-LABEL: gpu.func @scale(
// CHECK-SAME: %[[BUF:.*]]: memref<?xf32>
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NOT: nvvm.griddepcontrol
// CHECK-NEXT: %[[ID:.*]] = gpu.thread_id x
// CHECK-NEXT: memref.load %[[BUF]][%[[ID]]]
// CHECK-LABEL: gpu.func @empty(
// CHECK-NEXT: nvvm.griddepcontrol wait
// CHECK-NEXT: gpu.return
gpu.module @kernels {
  func.func @helper(%a: f32) -> f32 {
    %s = arith.addf %a, %a : f32
    return %s : f32
  }
  gpu.func @scale(%buf: memref<?xf32>) kernel {
    %i = gpu.thread_id x
    %v = memref.load %buf[%i] : memref<?xf32>
    %d = func.call @helper(%v) : (f32) -> f32
    memref.store %d, %buf[%i] : memref<?xf32>
    gpu.return
  }
  gpu.func @empty() kernel {
    gpu.return
  }
}

// A GPU module without kernels is left alone.
// CHECK-LABEL: gpu.module @no_kernels
// CHECK-NOT: symm_waits_for_grid_dependencies
// CHECK-NOT: griddepcontrol
// CHECK: gpu.func @only_helper
gpu.module @no_kernels {
  gpu.func @only_helper() {
    gpu.return
  }
}
