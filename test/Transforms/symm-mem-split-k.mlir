// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(func.func(symm-mem-split-k))' | FileCheck %s

#id = affine_map<(d0, d1) -> (d0, d1)>
symm_mem.group @tp world_size(2)
// A down projection whose partial sums only the all-reduce reads: the
// matmul and its zero fill become the all-reduce's prologue, with room for
// min(rows, 128) rows of 2 f32 slices (one flat allocation, viewed as
// slices x rows x columns).
// CHECK-LABEL: func.func @down_projection
// CHECK-SAME: (%[[ACT:.*]]: memref<?x7168xbf16>, %[[W:.*]]: memref<7168x4096xbf16>, %[[X:.*]]: memref<?x4096xbf16>, %[[OUT:.*]]: memref<?x4096xbf16>)
// CHECK: %[[P:.*]] = memref.alloc(%{{.*}}) : memref<?x4096xbf16>
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.matmul
// CHECK: %[[ROWS:.*]] = memref.dim %[[P]], %{{.*}} : memref<?x4096xbf16>
// CHECK: %[[BOUND:.*]] = arith.constant 128 : index
// CHECK: %[[ROOM:.*]] = arith.minui %[[ROWS]], %[[BOUND]] : index
// CHECK: %[[PER_ROW:.*]] = arith.constant 8192 : index
// CHECK: %[[ELEMENTS:.*]] = arith.muli %[[ROOM]], %[[PER_ROW]] : index
// CHECK: %[[FLAT:.*]] = memref.alloc(%[[ELEMENTS]]) : memref<?xf32>
// CHECK: %[[Q:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1, 2]] output_shape [2, %[[ROOM]], 4096] : memref<?xf32> into memref<2x?x4096xf32>
// CHECK: symm_mem.all_reduce_epilogue_out sum %[[P]] matmul(%[[ACT]], %[[W]] : memref<?x7168xbf16>, memref<7168x4096xbf16>) split_k(%[[Q]] : memref<2x?x4096xf32>) up to 128 rows epilogue(%[[X]] : memref<?x4096xbf16>) into %[[OUT]] group @tp algorithm auto {
// CHECK: symm_mem.epilogue_yield
// CHECK: } : memref<?x4096xbf16>, memref<?x4096xbf16>
// CHECK-NEXT: memref.dealloc %[[FLAT]] : memref<?xf32>
func.func @down_projection(%act: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>,
                           %x: memref<?x4096xbf16>, %out: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = memref.dim %act, %c0 : memref<?x7168xbf16>
  %p = memref.alloc(%m) : memref<?x4096xbf16>
  linalg.fill ins(%zero : bf16) outs(%p : memref<?x4096xbf16>)
  linalg.matmul ins(%act, %w : memref<?x7168xbf16>, memref<7168x4096xbf16>)
                outs(%p : memref<?x4096xbf16>)
  // expected-remark@-2 {{split over K into 2 slices summed by the all-reduce, for calls of up to 128 rows whose all-reduce is a one-shot (a call above one-shot-max-bytes, 512 KiB on more than 2 ranks by default, runs the matmul whole before a two-shot)}}
  symm_mem.all_reduce_epilogue_out sum %p epilogue(%x : memref<?x4096xbf16>) into %out group @tp algorithm auto {
  ^bb0(%s: bf16, %r: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    symm_mem.epilogue_yield %o : bf16
  } : memref<?x4096xbf16>, memref<?x4096xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
// A static row count keeps static room: 16 rows.
// CHECK-LABEL: func.func @static_rows
// CHECK: %[[FLAT:.*]] = memref.alloc() : memref<131072xf32>
// CHECK: %[[Q:.*]] = memref.expand_shape %[[FLAT]] {{\[\[}}0, 1, 2]] output_shape [2, 16, 4096] : memref<131072xf32> into memref<2x16x4096xf32>
// CHECK: symm_mem.all_reduce_epilogue_out sum %{{.*}} matmul(%{{.*}}, %{{.*}} : memref<16x7168xbf16>, memref<7168x4096xbf16>) split_k(%[[Q]] : memref<2x16x4096xf32>) up to 128 rows into
func.func @static_rows(%act: memref<16x7168xbf16>, %w: memref<7168x4096xbf16>, %out: memref<16x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %p = memref.alloc() : memref<16x4096xbf16>
  linalg.fill ins(%zero : bf16) outs(%p : memref<16x4096xbf16>)
  linalg.matmul ins(%act, %w : memref<16x7168xbf16>, memref<7168x4096xbf16>)
                outs(%p : memref<16x4096xbf16>)
  // expected-remark@-2 {{split over K into 2 slices}}
  symm_mem.all_reduce_epilogue_out sum %p into %out group @tp algorithm auto {
  ^bb0(%s: bf16):
    symm_mem.epilogue_yield %s : bf16
  } : memref<16x4096xbf16>, memref<16x4096xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
// More static rows than max-rows: prefill, left to cuBLAS as it is.
// CHECK-LABEL: func.func @prefill_rows
// CHECK: linalg.matmul
// CHECK: symm_mem.all_reduce_epilogue_out sum %{{.*}} into
func.func @prefill_rows(%act: memref<256x7168xbf16>, %w: memref<7168x4096xbf16>, %out: memref<256x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %p = memref.alloc() : memref<256x4096xbf16>
  linalg.fill ins(%zero : bf16) outs(%p : memref<256x4096xbf16>)
  linalg.matmul ins(%act, %w : memref<256x7168xbf16>, memref<7168x4096xbf16>)
                outs(%p : memref<256x4096xbf16>)
  symm_mem.all_reduce_epilogue_out sum %p into %out group @tp algorithm auto {
  ^bb0(%s: bf16):
    symm_mem.epilogue_yield %s : bf16
  } : memref<256x4096xbf16>, memref<256x4096xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
// Someone else reads the matmul's output: it must exist, so it stays.
// CHECK-LABEL: func.func @output_read_elsewhere
// CHECK: linalg.matmul
// CHECK: symm_mem.all_reduce_epilogue_out sum %{{.*}} into
// CHECK: memref.copy
func.func @output_read_elsewhere(%act: memref<16x7168xbf16>, %w: memref<7168x4096xbf16>,
                                 %out: memref<16x4096xbf16>, %keep: memref<16x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %p = memref.alloc() : memref<16x4096xbf16>
  linalg.fill ins(%zero : bf16) outs(%p : memref<16x4096xbf16>)
  linalg.matmul ins(%act, %w : memref<16x7168xbf16>, memref<7168x4096xbf16>)
                outs(%p : memref<16x4096xbf16>)
  symm_mem.all_reduce_epilogue_out sum %p into %out group @tp algorithm auto {
  ^bb0(%s: bf16):
    symm_mem.epilogue_yield %s : bf16
  } : memref<16x4096xbf16>, memref<16x4096xbf16>
  memref.copy %p, %keep : memref<16x4096xbf16> to memref<16x4096xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
// A short K (below min-k) is not split; neither is a matmul that
// accumulates (no zero fill before it).
// CHECK-LABEL: func.func @short_k_and_accumulating
// CHECK-COUNT-2: linalg.matmul
func.func @short_k_and_accumulating(%a: memref<16x2048xbf16>, %w: memref<2048x4096xbf16>,
                                    %b: memref<16x7168xbf16>, %v: memref<7168x4096xbf16>,
                                    %out: memref<16x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %p = memref.alloc() : memref<16x4096xbf16>
  linalg.fill ins(%zero : bf16) outs(%p : memref<16x4096xbf16>)
  linalg.matmul ins(%a, %w : memref<16x2048xbf16>, memref<2048x4096xbf16>)
                outs(%p : memref<16x4096xbf16>)
  symm_mem.all_reduce_epilogue_out sum %p into %out group @tp algorithm auto {
  ^bb0(%s: bf16):
    symm_mem.epilogue_yield %s : bf16
  } : memref<16x4096xbf16>, memref<16x4096xbf16>
  %q = memref.alloc() : memref<16x4096xbf16>
  linalg.matmul ins(%b, %v : memref<16x7168xbf16>, memref<7168x4096xbf16>)
                outs(%q : memref<16x4096xbf16>)
  symm_mem.all_reduce_epilogue_out sum %q into %out group @tp algorithm auto {
  ^bb0(%s: bf16):
    symm_mem.epilogue_yield %s : bf16
  } : memref<16x4096xbf16>, memref<16x4096xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
// A down projection whose all-reduce carries the residual and the next
// layer's RMSNorm (an all_reduce_rows_out, as in a decoder stack) takes
// the same prologue; its three regions, row operands and row_init stay.
// CHECK-LABEL: func.func @down_projection_then_norm
// CHECK-SAME: (%[[ACT:.*]]: memref<?x7168xbf16>, %[[W:.*]]: memref<7168x4096xbf16>, %[[X:.*]]: memref<?x4096xbf16>, %[[G:.*]]: memref<4096xbf16>, %[[H:.*]]: memref<?x4096xbf16>, %[[N:.*]]: memref<?x4096xbf16>)
// CHECK-NOT: linalg.matmul
// CHECK: %[[Q:.*]] = memref.expand_shape %{{.*}} {{\[\[}}0, 1, 2]] output_shape [2, %{{.*}}, 4096] : memref<?xf32> into memref<2x?x4096xf32>
// CHECK: symm_mem.all_reduce_rows_out sum %{{.*}} matmul(%[[ACT]], %[[W]] : memref<?x7168xbf16>, memref<7168x4096xbf16>) split_k(%[[Q]] : memref<2x?x4096xf32>) up to 128 rows epilogue(%[[X]] : memref<?x4096xbf16>) into %[[H]] rows(%[[G]] : memref<4096xbf16>) into %[[N]] init 1.000000e+00 group @tp algorithm auto {
// CHECK: arith.addf
// CHECK: } step {
// CHECK: arith.mulf
// CHECK: } apply {
// CHECK: math.rsqrt
// CHECK: } : memref<?x4096xbf16>, memref<?x4096xbf16>, memref<?x4096xbf16>
// CHECK-NEXT: memref.dealloc
func.func @down_projection_then_norm(%act: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>,
                                     %x: memref<?x4096xbf16>, %g: memref<4096xbf16>,
                                     %h: memref<?x4096xbf16>, %n: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : bf16
  %m = memref.dim %act, %c0 : memref<?x7168xbf16>
  %p = memref.alloc(%m) : memref<?x4096xbf16>
  linalg.fill ins(%zero : bf16) outs(%p : memref<?x4096xbf16>)
  linalg.matmul ins(%act, %w : memref<?x7168xbf16>, memref<7168x4096xbf16>)
                outs(%p : memref<?x4096xbf16>)
  // expected-remark@-2 {{split over K into 2 slices summed by the all-reduce, for calls of up to 128 rows}}
  symm_mem.all_reduce_rows_out sum %p epilogue(%x : memref<?x4096xbf16>) into %h rows(%g : memref<4096xbf16>) into %n init 1.0 group @tp algorithm auto {
  ^bb0(%s: bf16, %r: bf16):
    %y = arith.addf %s, %r : bf16
    symm_mem.epilogue_yield %y : bf16
  } step {
  ^bb0(%e: bf16, %acc: f32):
    %f = arith.extf %e : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %t = arith.addf %sq, %acc : f32
    symm_mem.epilogue_yield %t : f32
  } apply {
  ^bb0(%e: bf16, %total: f32, %gv: bf16):
    %inv = math.rsqrt %total : f32
    %f = arith.extf %e : bf16 to f32
    %y = arith.mulf %f, %inv : f32
    %o = arith.truncf %y : f32 to bf16
    %z = arith.mulf %o, %gv : bf16
    symm_mem.epilogue_yield %z : bf16
  } : memref<?x4096xbf16>, memref<?x4096xbf16>, memref<?x4096xbf16>
  return
}
