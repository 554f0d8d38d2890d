// RUN: symm-opt %s | symm-opt | FileCheck %s
// RUN: symm-opt %s --mlir-print-op-generic | symm-opt | FileCheck %s

// CHECK-LABEL: func.func private @p0
// CHECK-SAME: attributes {cudagraph.hoisted = array<i64: 1>, cudagraph.partition = 0 : i64}
func.func private @p0(%x: memref<4xf32>) -> (memref<4xf32>, memref<4xf32>) attributes {cudagraph.partition = 0 : i64, cudagraph.hoisted = array<i64: 1>} {
  %a = memref.alloc() : memref<4xf32>
  return %x, %a : memref<4xf32>, memref<4xf32>
}

// CHECK-LABEL: func.func private @kernel
// CHECK-SAME: attributes {cudagraph.capturable}
func.func private @kernel(memref<4xf32>) attributes {cudagraph.capturable}

// CHECK-LABEL: func.func @f
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>, %[[H:.*]]: memref<4xf32, #cudagraph.host>)
func.func @f(%x: memref<4xf32>, %h: memref<4xf32, #cudagraph.host>) -> memref<4xf32> {
  // CHECK: %[[R:.*]]:2 = cudagraph.launch @p0(%[[X]]) : (memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
  %y:2 = cudagraph.launch @p0(%x) : (memref<4xf32>) -> (memref<4xf32>, memref<4xf32>)
  // CHECK: memref.copy %[[R]]#0, %[[H]] : memref<4xf32> to memref<4xf32, #cudagraph.host>
  memref.copy %y#0, %h : memref<4xf32> to memref<4xf32, #cudagraph.host>
  return %y#1 : memref<4xf32>
}
