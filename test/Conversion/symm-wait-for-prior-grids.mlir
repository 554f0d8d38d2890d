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
// A kernel that opens with L2 prefetches (and the arithmetic of their
// addresses) waits after the last of them: they yield no value, and L2 is
// where the grid before writes.
// CHECK: gpu.func @prefetching(%[[W:.*]]: !llvm.ptr<1>, %[[O:.*]]: !llvm.ptr<1>) kernel
// CHECK-NEXT: %[[T:.*]] = gpu.thread_id x
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[T]] : index to i64
// CHECK-NEXT: %[[LINE:.*]] = llvm.getelementptr %[[W]][%[[I]]]
// CHECK-NEXT: nvvm.prefetch level = L2, %[[LINE]] : !llvm.ptr<1>
// CHECK-NEXT: %[[NEXT:.*]] = llvm.getelementptr %[[LINE]][64]
// CHECK-NEXT: nvvm.prefetch level = L2, %[[NEXT]] : !llvm.ptr<1>
// CHECK-NEXT: nvvm.griddepcontrol  wait
// CHECK-NEXT: %[[V:.*]] = llvm.getelementptr %[[O]][%[[I]]]
// CHECK-NEXT: llvm.load %[[LINE]]
// A load before the prefetch, or a prefetch to L1 (not where the grid
// before writes), keeps the wait first.
// CHECK: gpu.func @load_first(%{{.*}}: !llvm.ptr<1>) kernel
// CHECK-NEXT: nvvm.griddepcontrol  wait
// CHECK-NEXT: llvm.load
// CHECK: gpu.func @l1_prefetch(%{{.*}}: !llvm.ptr<1>) kernel
// CHECK-NEXT: nvvm.griddepcontrol  wait
// CHECK-NEXT: nvvm.prefetch level = L1
// A kernel that already waits placed its wait itself, after reads that
// no grid before it writes (the wgmma GEMV's weight, streamed into its ring
// before the wait): it gets no second one.
// CHECK: gpu.func @own_wait(%[[W:.*]]: !llvm.ptr<1>, %[[O:.*]]: !llvm.ptr<1>) kernel
// CHECK-NEXT: %[[WV:.*]] = llvm.load %[[W]]
// CHECK-NEXT: nvvm.griddepcontrol  wait
// CHECK-NEXT: llvm.store %[[WV]], %[[O]]
// CHECK-NOT: griddepcontrol
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
  gpu.func @prefetching(%w: !llvm.ptr<1>, %o: !llvm.ptr<1>) kernel {
    %t = gpu.thread_id x
    %i = arith.index_cast %t : index to i64
    %line = llvm.getelementptr %w[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i16
    nvvm.prefetch level = L2, %line : !llvm.ptr<1>
    %next = llvm.getelementptr %line[64] : (!llvm.ptr<1>) -> !llvm.ptr<1>, i16
    nvvm.prefetch level = L2, %next : !llvm.ptr<1>
    %at = llvm.getelementptr %o[%i] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i16
    %v = llvm.load %line : !llvm.ptr<1> -> i16
    llvm.store %v, %at : i16, !llvm.ptr<1>
    gpu.return
  }
  gpu.func @load_first(%w: !llvm.ptr<1>) kernel {
    %v = llvm.load %w : !llvm.ptr<1> -> i64
    %p = llvm.getelementptr %w[%v] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i16
    nvvm.prefetch level = L2, %p : !llvm.ptr<1>
    gpu.return
  }
  gpu.func @l1_prefetch(%w: !llvm.ptr<1>) kernel {
    nvvm.prefetch level = L1, %w : !llvm.ptr<1>
    gpu.return
  }
  gpu.func @own_wait(%w: !llvm.ptr<1>, %o: !llvm.ptr<1>) kernel {
    %v = llvm.load %w : !llvm.ptr<1> -> i64
    nvvm.griddepcontrol wait
    llvm.store %v, %o : i64, !llvm.ptr<1>
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
