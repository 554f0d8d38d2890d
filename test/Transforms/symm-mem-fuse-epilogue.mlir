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
  symm_mem.all_reduce_out sum %p into %r group @tp algorithm one_shot : memref<8x64xf32>, memref<8x64xf32>
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

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
symm_mem.group @tp world_size(2)
// The all-reduce, the residual add and RMSNorm (its sum of squares, then
// its scaling) become one op: the statistic's buffer and its fill go.
// CHECK-LABEL: func.func @residual_rmsnorm
// CHECK-SAME: (%[[P:.*]]: memref<?x4096xbf16>, %[[X:.*]]: memref<?x4096xbf16>, %[[G:.*]]: memref<4096xbf16>, %[[H:.*]]: memref<?x4096xbf16>, %[[N:.*]]: memref<?x4096xbf16>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.fill
// CHECK: symm_mem.all_reduce_rows_out sum %[[P]] epilogue(%[[X]] : memref<?x4096xbf16>) into %[[H]] rows(%[[G]] : memref<4096xbf16>) into %[[N]] init 0.000000e+00 group @tp algorithm auto {
// CHECK-NEXT: ^bb0(%[[R:.*]]: bf16, %[[XV:.*]]: bf16):
// CHECK: symm_mem.epilogue_yield %{{.*}} : bf16
// CHECK-NEXT: } step {
// CHECK-NEXT: ^bb0(%[[E:.*]]: bf16, %[[ACC:.*]]: f32):
// CHECK-NEXT: %[[EF:.*]] = arith.extf %[[E]] : bf16 to f32
// CHECK-NEXT: %[[SQ:.*]] = arith.mulf %[[EF]], %[[EF]] : f32
// CHECK-NEXT: %[[S:.*]] = arith.addf %[[SQ]], %[[ACC]] : f32
// CHECK-NEXT: symm_mem.epilogue_yield %[[S]] : f32
// CHECK-NEXT: } apply {
// CHECK-NEXT: ^bb0(%[[E2:.*]]: bf16, %[[TOTAL:.*]]: f32, %[[GV:.*]]: bf16):
// CHECK-DAG: %[[HIDDEN:.*]] = arith.constant 4.096000e+03 : f32
// CHECK-DAG: %[[EPS:.*]] = arith.constant 9.99999974E-6 : f32
// CHECK: %[[MEAN:.*]] = arith.divf %[[TOTAL]], %[[HIDDEN]] : f32
// CHECK: arith.addf %[[MEAN]], %[[EPS]] : f32
// CHECK: arith.extf %[[E2]] : bf16 to f32
// CHECK: arith.extf %[[GV]] : bf16 to f32
// CHECK: symm_mem.epilogue_yield %{{.*}} : bf16
// CHECK-NEXT: } : memref<?x4096xbf16>, memref<?x4096xbf16>, memref<?x4096xbf16>
// CHECK-NOT: linalg.generic
// CHECK-NOT: memref.dealloc
func.func @residual_rmsnorm(%p: memref<?x4096xbf16>, %x: memref<?x4096xbf16>, %g: memref<4096xbf16>,
                            %h: memref<?x4096xbf16>, %n: memref<?x4096xbf16>) {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %p, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 4096.0 : f32
  %r = memref.alloc(%rows) : memref<?x4096xbf16>
  symm_mem.all_reduce_out sum %p into %r group @tp : memref<?x4096xbf16>, memref<?x4096xbf16>
  // expected-remark@-1 {{fused the element-wise consumer into the all-reduce}}
  // expected-remark@-2 {{fused the row statistic and its consumer into the all-reduce}}
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r, %x : memref<?x4096xbf16>, memref<?x4096xbf16>) outs(%h : memref<?x4096xbf16>) {
  ^bb0(%rv: bf16, %xv: bf16, %o: bf16):
    %a = arith.extf %rv : bf16 to f32
    %b = arith.extf %xv : bf16 to f32
    %s = arith.addf %a, %b : f32
    %t = arith.truncf %s : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %r : memref<?x4096xbf16>
  %sum_sq = memref.alloc(%rows) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<?x4096xbf16>) outs(%sum_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %sum_sq, %g : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>) outs(%n : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %s: f32, %w: bf16, %unused: bf16):
    %mean = arith.divf %s, %hidden : f32
    %var = arith.addf %mean, %eps : f32
    %inv = math.rsqrt %var : f32
    %f = arith.extf %v : bf16 to f32
    %y = arith.mulf %f, %inv : f32
    %wf = arith.extf %w : bf16 to f32
    %z = arith.mulf %y, %wf : f32
    %t = arith.truncf %z : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %sum_sq : memref<?xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
symm_mem.group @tp world_size(2)
// A max-reduction (softmax's) is not a sum the block can add up: the chain
// stays apart, with a remark at the reduction.
// CHECK-LABEL: func.func @row_max
// CHECK: symm_mem.all_reduce_epilogue_out
// CHECK: linalg.fill
// CHECK: linalg.generic
func.func @row_max(%p: memref<8x64xf32>, %h: memref<8x64xf32>, %m: memref<8xf32>) {
  %ninf = arith.constant 0xFF800000 : f32
  %r = memref.alloc() : memref<8x64xf32>
  symm_mem.all_reduce_out sum %p into %r group @tp : memref<8x64xf32>, memref<8x64xf32>
  // expected-remark@-1 {{fused the element-wise consumer into the all-reduce}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<8x64xf32>) outs(%h : memref<8x64xf32>) {
  ^bb0(%rv: f32, %o: f32):
    %e = math.exp %rv : f32
    linalg.yield %e : f32
  }
  memref.dealloc %r : memref<8x64xf32>
  %stat = memref.alloc() : memref<8xf32>
  linalg.fill ins(%ninf : f32) outs(%stat : memref<8xf32>)
  // expected-remark@+1 {{not fused into the all-reduce's rows: its body does not yield arith.addf(x, acc) with acc read only there}}
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<8x64xf32>) outs(%stat : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %mx = arith.maximumf %v, %acc : f32
    linalg.yield %mx : f32
  }
  memref.copy %stat, %m : memref<8xf32> to memref<8xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
symm_mem.group @tp world_size(2)
// A statistic that the program reads afterwards stays a buffer: apart.
// CHECK-LABEL: func.func @statistic_read_after
// CHECK: symm_mem.all_reduce_epilogue_out
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @statistic_read_after(%p: memref<8x64xf32>, %h: memref<8x64xf32>, %n: memref<8x64xf32>, %m: memref<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<8x64xf32>
  symm_mem.all_reduce_out sum %p into %r group @tp : memref<8x64xf32>, memref<8x64xf32>
  // expected-remark@-1 {{fused the element-wise consumer into the all-reduce}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<8x64xf32>) outs(%h : memref<8x64xf32>) {
  ^bb0(%rv: f32, %o: f32):
    linalg.yield %rv : f32
  }
  memref.dealloc %r : memref<8x64xf32>
  %stat = memref.alloc() : memref<8xf32>
  linalg.fill ins(%zero : f32) outs(%stat : memref<8xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<8x64xf32>) outs(%stat : memref<8xf32>) {
  ^bb0(%v: f32, %acc: f32):
    %s = arith.addf %v, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %stat : memref<8x64xf32>, memref<8xf32>) outs(%n : memref<8x64xf32>) {
  ^bb0(%v: f32, %s: f32, %o: f32):
    %y = arith.divf %v, %s : f32
    linalg.yield %y : f32
  }
  // expected-remark@+1 {{not fused into the all-reduce's rows: it reads the row statistic, which the fused kernel keeps in registers}}
  memref.copy %stat, %m : memref<8xf32> to memref<8xf32>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
symm_mem.group @tp world_size(2)
// Rows longer than the fused kernel holds in registers (16 KB) stay apart:
// the all-reduce with its epilogue, then the row kernels.
// CHECK-LABEL: func.func @long_rows
// CHECK: symm_mem.all_reduce_epilogue_out
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
func.func @long_rows(%p: memref<2x16384xbf16>, %h: memref<2x16384xbf16>, %n: memref<2x16384xbf16>) {
  %zero = arith.constant 0.0 : f32
  %r = memref.alloc() : memref<2x16384xbf16>
  symm_mem.all_reduce_out sum %p into %r group @tp : memref<2x16384xbf16>, memref<2x16384xbf16>
  // expected-remark@-1 {{fused the element-wise consumer into the all-reduce}}
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%r : memref<2x16384xbf16>) outs(%h : memref<2x16384xbf16>) {
  ^bb0(%rv: bf16, %o: bf16):
    linalg.yield %rv : bf16
  }
  memref.dealloc %r : memref<2x16384xbf16>
  %stat = memref.alloc() : memref<2xf32>
  linalg.fill ins(%zero : f32) outs(%stat : memref<2xf32>)
  // expected-remark@+1 {{not fused into the all-reduce's rows: its rows of 32768 bytes are longer than the fused kernel holds (16384)}}
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<2x16384xbf16>) outs(%stat : memref<2xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %s = arith.addf %f, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %stat : memref<2x16384xbf16>, memref<2xf32>) outs(%n : memref<2x16384xbf16>) {
  ^bb0(%v: bf16, %s: f32, %o: bf16):
    %f = arith.extf %v : bf16 to f32
    %y = arith.divf %f, %s : f32
    %t = arith.truncf %y : f32 to bf16
    linalg.yield %t : bf16
  }
  memref.dealloc %stat : memref<2xf32>
  return
}
