// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(symm-mem-fuse-epilogue))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
symm_mem.group @tp world_size(2)
// CHECK-LABEL: func.func @bias_residual
// CHECK-SAME: (%[[P:.*]]: memref<8x64xf32>, %[[B:.*]]: memref<64xf32>, %[[X:.*]]: memref<8x64xf32>, %[[Y:.*]]: memref<8x64xf32>)
// CHECK-NOT: memref.alloc
// CHECK: symm_mem.all_reduce_epilogue_out sum %[[P]] epilogue(%[[B]], %[[X]] : memref<64xf32>, memref<8x64xf32>) into %[[Y]] group @tp algorithm one_shot {
// CHECK-NEXT: ^bb0(%[[R:.*]]: f32, %[[BV:.*]]: f32, %[[XV:.*]]: f32):
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK: %[[S:.*]] = arith.addf %[[R]], %[[BV]] : f32
// CHECK: %[[T:.*]] = arith.addf %[[S]], %[[XV]] : f32
// CHECK: %[[U:.*]] = arith.maximumf %[[T]], %[[ZERO]] : f32
// CHECK: symm_mem.epilogue_yield %[[U]] : f32
// CHECK-NOT: linalg.generic
func.func @bias_residual(%p: memref<8x64xf32>, %b: memref<64xf32>, %x: memref<8x64xf32>, %y: memref<8x64xf32>) {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<8x64xf32>
  symm_mem.one_shot_all_reduce_out sum %p into %r group @tp : memref<8x64xf32>, memref<8x64xf32>
  // expected-remark@-1 {{fused the element-wise consumer into the all-reduce}}
  linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %b, %x : memref<8x64xf32>, memref<64xf32>, memref<8x64xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%rv: f32, %bv: f32, %xv: f32, %o: f32):
    %s = arith.addf %rv, %bv : f32
    %t = arith.addf %s, %xv : f32
    %u = arith.maximumf %t, %zero : f32
    linalg.yield %u : f32
  }
  memref.dealloc %r : memref<8x64xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#tr = affine_map<(d0, d1) -> (d1, d0)>
symm_mem.group @tp world_size(2)
// A transposed read is not element-wise at the same position: not fused.
// CHECK-LABEL: func.func @transposed
// CHECK: symm_mem.all_reduce_out
// CHECK: linalg.generic
func.func @transposed(%p: memref<8x8xf32>, %y: memref<8x8xf32>) {
  %r = memref.alloc() : memref<8x8xf32>
  symm_mem.all_reduce_out sum %p into %r group @tp : memref<8x8xf32>, memref<8x8xf32>
  // expected-remark@+1 {{not fused into the all-reduce epilogue: it reads an operand with a map other than identity or row broadcast}}
  linalg.generic {indexing_maps = [#tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<8x8xf32>) outs(%y : memref<8x8xf32>) {
  ^bb0(%rv: f32, %o: f32):
    linalg.yield %rv : f32
  }
  return
}
