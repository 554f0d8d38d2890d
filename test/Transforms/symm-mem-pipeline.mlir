// The three passes together on seed 001's model.
// RUN: symm-opt %s -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-mem-to-dps),symm-mem-realize,symm-mem-plan)' \
// RUN:   | FileCheck %s

// Seed 001's 8-layer matmul -> all_reduce model: after to-dps and realize,
// the 8 symmetric matmul outputs share one slot and the 7 intermediate
// all-reduce outputs share another (the last one is the result): 9
// intermediate buffers become 2.
// CHECK: symm_mem.global @[[$SP:__symm_pool_mlp8_tp]] alignment(128) : memref<1024xi8, #[[$TP:.*]]>
// CHECK-LABEL: func.func @mlp8
// CHECK-DAG: %[[SPOOL:.*]] = symm_mem.get_global @[[$SP]] : memref<1024xi8, #[[$TP]]>
// CHECK-DAG: %[[RPOOL:.*]] = memref.alloc() {alignment = 128 : i64} : memref<1024xi8>
// CHECK: %[[P0:.*]] = memref.view %[[SPOOL]][%{{.*}}][] : memref<1024xi8, #[[$TP]]> to memref<8x64xbf16, #[[$TP]]>
// CHECK: %[[R0:.*]] = memref.view %[[RPOOL]][%{{.*}}][] : memref<1024xi8> to memref<8x64xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[P0]] into %[[R0]] group @tp algorithm one_shot
// CHECK: %[[P1:.*]] = memref.view %[[SPOOL]][%{{.*}}][] : memref<1024xi8, #[[$TP]]> to memref<8x64xbf16, #[[$TP]]>
// CHECK: %[[R1:.*]] = memref.view %[[RPOOL]][%{{.*}}][] : memref<1024xi8> to memref<8x64xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[P1]] into %[[R1]] group @tp algorithm one_shot
// CHECK: %[[P2:.*]] = memref.view %[[SPOOL]][%{{.*}}][] : memref<1024xi8, #[[$TP]]> to memref<8x64xbf16, #[[$TP]]>
// CHECK: %[[R2:.*]] = memref.view %[[RPOOL]][%{{.*}}][] : memref<1024xi8> to memref<8x64xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[P2]] into %[[R2]] group @tp algorithm one_shot
// CHECK: %[[P3:.*]] = memref.view %[[SPOOL]][%{{.*}}][] : memref<1024xi8, #[[$TP]]> to memref<8x64xbf16, #[[$TP]]>
// CHECK: %[[R3:.*]] = memref.view %[[RPOOL]][%{{.*}}][] : memref<1024xi8> to memref<8x64xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[P3]] into %[[R3]] group @tp algorithm one_shot
// CHECK: %[[P4:.*]] = memref.view %[[SPOOL]][%{{.*}}][] : memref<1024xi8, #[[$TP]]> to memref<8x64xbf16, #[[$TP]]>
// CHECK: %[[R4:.*]] = memref.view %[[RPOOL]][%{{.*}}][] : memref<1024xi8> to memref<8x64xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[P4]] into %[[R4]] group @tp algorithm one_shot
// CHECK: %[[P5:.*]] = memref.view %[[SPOOL]][%{{.*}}][] : memref<1024xi8, #[[$TP]]> to memref<8x64xbf16, #[[$TP]]>
// CHECK: %[[R5:.*]] = memref.view %[[RPOOL]][%{{.*}}][] : memref<1024xi8> to memref<8x64xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[P5]] into %[[R5]] group @tp algorithm one_shot
// CHECK: %[[P6:.*]] = memref.view %[[SPOOL]][%{{.*}}][] : memref<1024xi8, #[[$TP]]> to memref<8x64xbf16, #[[$TP]]>
// CHECK: %[[R6:.*]] = memref.view %[[RPOOL]][%{{.*}}][] : memref<1024xi8> to memref<8x64xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[P6]] into %[[R6]] group @tp algorithm one_shot
// CHECK: %[[P7:.*]] = memref.view %[[SPOOL]]
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<8x64xbf16>
// CHECK: symm_mem.all_reduce_out sum %[[P7]] into %[[OUT]] group @tp algorithm one_shot
// CHECK: memref.dealloc %[[RPOOL]] : memref<1024xi8>
// CHECK-NEXT: return %[[OUT]]
symm_mem.group @tp world_size(2)
// expected-remark@+2 {{regular pool: 1024 bytes for 7 buffers (7168 bytes if allocated apart), lower bound 1024 bytes (1.00x), 6 reuses}}
// expected-remark@+1 {{pool @__symm_pool_mlp8_tp (#symm_mem.allocator<symmetric, @tp>): 1024 bytes for 8 buffers (8192 bytes if allocated apart), lower bound 1024 bytes (1.00x), 7 reuses}}
func.func @mlp8(%x: memref<8x64xbf16>, %w: memref<64x64xbf16>) -> memref<8x64xbf16> {
  %zero = arith.constant 0.0 : bf16
  %p0 = memref.alloc() : memref<8x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%p0 : memref<8x64xbf16>)
  linalg.matmul ins(%x, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%p0 : memref<8x64xbf16>)
  // expected-remark@+1 {{path 1, zero copy}}
  %h0 = symm_mem.all_reduce sum %p0 group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  %p1 = memref.alloc() : memref<8x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%p1 : memref<8x64xbf16>)
  linalg.matmul ins(%h0, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%p1 : memref<8x64xbf16>)
  // expected-remark@+1 {{path 1, zero copy}}
  %h1 = symm_mem.all_reduce sum %p1 group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  %p2 = memref.alloc() : memref<8x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%p2 : memref<8x64xbf16>)
  linalg.matmul ins(%h1, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%p2 : memref<8x64xbf16>)
  // expected-remark@+1 {{path 1, zero copy}}
  %h2 = symm_mem.all_reduce sum %p2 group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  %p3 = memref.alloc() : memref<8x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%p3 : memref<8x64xbf16>)
  linalg.matmul ins(%h2, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%p3 : memref<8x64xbf16>)
  // expected-remark@+1 {{path 1, zero copy}}
  %h3 = symm_mem.all_reduce sum %p3 group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  %p4 = memref.alloc() : memref<8x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%p4 : memref<8x64xbf16>)
  linalg.matmul ins(%h3, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%p4 : memref<8x64xbf16>)
  // expected-remark@+1 {{path 1, zero copy}}
  %h4 = symm_mem.all_reduce sum %p4 group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  %p5 = memref.alloc() : memref<8x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%p5 : memref<8x64xbf16>)
  linalg.matmul ins(%h4, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%p5 : memref<8x64xbf16>)
  // expected-remark@+1 {{path 1, zero copy}}
  %h5 = symm_mem.all_reduce sum %p5 group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  %p6 = memref.alloc() : memref<8x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%p6 : memref<8x64xbf16>)
  linalg.matmul ins(%h5, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%p6 : memref<8x64xbf16>)
  // expected-remark@+1 {{path 1, zero copy}}
  %h6 = symm_mem.all_reduce sum %p6 group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  %p7 = memref.alloc() : memref<8x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%p7 : memref<8x64xbf16>)
  linalg.matmul ins(%h6, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%p7 : memref<8x64xbf16>)
  // expected-remark@+1 {{path 1, zero copy}}
  %h7 = symm_mem.all_reduce sum %p7 group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  return %h7 : memref<8x64xbf16>
}

