// RUN: symm-opt %s --pass-pipeline='builtin.module(func.func(symm-mem-to-dps))' | FileCheck %s

symm_mem.group @tp world_size(2)
symm_mem.group @dyn

// Every functional form becomes its _out form writing into an explicit
// allocation that replaces the result (seed 001 [1/5]).
// CHECK-LABEL: func.func @static
// CHECK-SAME: (%[[X:.*]]: memref<4x4xf32>, %[[H:.*]]: memref<8xbf16>)
func.func @static(%x: memref<4x4xf32>, %h: memref<8xbf16>) -> (memref<4x4xf32>, memref<8xbf16>, memref<8xbf16>) {
  // CHECK: %[[O1:.*]] = memref.alloc() : memref<4x4xf32>
  // CHECK-NEXT: symm_mem.all_reduce_out sum %[[X]] into %[[O1]] group @tp : memref<4x4xf32>, memref<4x4xf32>
  %0 = symm_mem.all_reduce sum %x group @tp : memref<4x4xf32> -> memref<4x4xf32>
  // CHECK: %[[O2:.*]] = memref.alloc() : memref<8xbf16>
  // CHECK-NEXT: symm_mem.all_reduce_out max %[[H]] into %[[O2]] group @tp algorithm one_shot
  %1 = symm_mem.all_reduce max %h group @tp algorithm one_shot : memref<8xbf16> -> memref<8xbf16>
  // CHECK: %[[O3:.*]] = memref.alloc() : memref<8xbf16>
  // CHECK-NEXT: symm_mem.all_reduce_out min %[[H]] into %[[O3]] group @tp algorithm two_shot
  %2 = symm_mem.all_reduce min %h group @tp algorithm two_shot : memref<8xbf16> -> memref<8xbf16>
  // CHECK-NOT: symm_mem.all_reduce {{.*}}->
  // CHECK: return %[[O1]], %[[O2]], %[[O3]]
  return %0, %1, %2 : memref<4x4xf32>, memref<8xbf16>, memref<8xbf16>
}

// Dynamic sizes come from the input.
// CHECK-LABEL: func.func @dynamic_all_reduce
// CHECK-SAME: (%[[D:.*]]: memref<?x8xf16>)
func.func @dynamic_all_reduce(%d: memref<?x8xf16>) -> memref<?x8xf16> {
  // CHECK: %[[C0:.*]] = arith.constant 0 : index
  // CHECK: %[[N:.*]] = memref.dim %[[D]], %[[C0]] : memref<?x8xf16>
  // CHECK: %[[O:.*]] = memref.alloc(%[[N]]) : memref<?x8xf16>
  // CHECK: symm_mem.all_reduce_out sum %[[D]] into %[[O]] group @tp
  %0 = symm_mem.all_reduce sum %d group @tp : memref<?x8xf16> -> memref<?x8xf16>
  // CHECK: return %[[O]]
  return %0 : memref<?x8xf16>
}

// all_gather_matmul: rows = world_size * shard rows, columns from b.
// CHECK-LABEL: func.func @all_gather_matmul
// CHECK-SAME: (%[[A:.*]]: memref<?x16xf32>, %[[B:.*]]: memref<16x?xf32>, %[[A2:.*]]: memref<4x16xf32>, %[[B2:.*]]: memref<16x32xf32>)
func.func @all_gather_matmul(%a: memref<?x16xf32>, %b: memref<16x?xf32>, %a2: memref<4x16xf32>, %b2: memref<16x32xf32>) -> (memref<?x?xf32>, memref<8x32xf32>) {
  // CHECK: %[[W:.*]] = symm_mem.world_size @dyn
  // CHECK: %[[M:.*]] = memref.dim %[[A]], %{{.*}} : memref<?x16xf32>
  // CHECK: %[[ROWS:.*]] = arith.muli %[[W]], %[[M]] : index
  // CHECK: %[[COLS:.*]] = memref.dim %[[B]], %{{.*}} : memref<16x?xf32>
  // CHECK: %[[O:.*]] = memref.alloc(%[[ROWS]], %[[COLS]]) : memref<?x?xf32>
  // CHECK: symm_mem.all_gather_matmul_out %[[A]], %[[B]] into %[[O]] group @dyn
  %0 = symm_mem.all_gather_matmul %a, %b group @dyn : memref<?x16xf32>, memref<16x?xf32> -> memref<?x?xf32>
  // CHECK: %[[O2:.*]] = memref.alloc() : memref<8x32xf32>
  // CHECK: symm_mem.all_gather_matmul_out %[[A2]], %[[B2]] into %[[O2]] group @tp
  %1 = symm_mem.all_gather_matmul %a2, %b2 group @tp : memref<4x16xf32>, memref<16x32xf32> -> memref<8x32xf32>
  return %0, %1 : memref<?x?xf32>, memref<8x32xf32>
}

// Out forms and nested regions: already-DPS ops stay, nested ones convert.
// CHECK-LABEL: func.func @nested
func.func @nested(%x: memref<4xf32>, %y: memref<4xf32>, %n: index) {
  // CHECK: symm_mem.all_reduce_out sum %{{.*}} into %{{.*}} group @tp
  symm_mem.all_reduce_out sum %x into %y group @tp : memref<4xf32>, memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: scf.for
  scf.for %i = %c0 to %n step %c1 {
    // CHECK: %[[O:.*]] = memref.alloc() : memref<4xf32>
    // CHECK: symm_mem.all_reduce_out sum %{{.*}} into %[[O]] group @tp algorithm two_shot
    // CHECK: memref.copy %[[O]], %{{.*}}
    %0 = symm_mem.all_reduce sum %x group @tp algorithm two_shot : memref<4xf32> -> memref<4xf32>
    memref.copy %0, %y : memref<4xf32> to memref<4xf32>
  }
  return
}
