// RUN: symm-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(symm-mem-plan{alignment=64})' | FileCheck %s
// The default alignment; the last case's error makes this run exit non-zero.
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-mem-plan)' 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=ALIGN128
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-mem-plan{alignment=96})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=BADALIGN
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-mem-plan{matmul-groups=false})' 2>&1 \
// RUN:   | FileCheck %s --check-prefix=NOGROUPS
// Without symm-linalg-matmul-to-gpu in the pipeline the pair's output may
// take its input's memory again:
// NOGROUPS: regular pool: 6144 bytes for 4 buffers (8192 bytes if allocated apart), lower bound 6144 bytes (1.00x), 1 reuse
// BADALIGN: error: symm-mem-plan: alignment must be a positive power of two, got 96

// Seed 002's graph: three 4x4 f32 comm buffers live at once share one
// 192-byte pool at distinct offsets; the fourth, born after they die,
// reuses one of their offsets.
// CHECK: symm_mem.global @[[$POOL:__symm_pool_seed002_0]] alignment(64) : memref<192xi8, #[[$S0:.*]]>
// CHECK-LABEL: func.func @seed002
// CHECK: %[[P:.*]] = symm_mem.get_global @[[$POOL]] : memref<192xi8, #[[$S0]]>
// CHECK-DAG: %[[O0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[O64:.*]] = arith.constant 64 : index
// CHECK-DAG: %[[O128:.*]] = arith.constant 128 : index
// CHECK-DAG: %[[B0:.*]] = memref.view %[[P]][%[[O0]]][] : memref<192xi8, #[[$S0]]> to memref<4x4xf32, #[[$S0]]>
// CHECK-DAG: %[[B3:.*]] = memref.view %[[P]][%[[O64]]][] : memref<192xi8, #[[$S0]]> to memref<4x4xf32, #[[$S0]]>
// CHECK-DAG: %[[B6:.*]] = memref.view %[[P]][%[[O128]]][] : memref<192xi8, #[[$S0]]> to memref<4x4xf32, #[[$S0]]>
// CHECK: symm_mem.all_reduce sum %[[B0]] {{.*}} algorithm one_shot
// CHECK: symm_mem.all_reduce sum %[[B3]] {{.*}} algorithm one_shot
// CHECK: %[[R7:.*]] = symm_mem.all_reduce sum %[[B6]] {{.*}} algorithm one_shot
// CHECK: %[[OFF9:.*]] = arith.constant {{0|64|128}} : index
// CHECK: %[[B9:.*]] = memref.view %[[P]][%[[OFF9]]][] : memref<192xi8, #[[$S0]]> to memref<4x4xf32, #[[$S0]]>
// CHECK: symm_mem.all_reduce sum %[[B9]] {{.*}} algorithm one_shot
// CHECK-NOT: symm_mem.alloc
// CHECK: return
// With the default 128-byte alignment the same graph needs 384 bytes.
// ALIGN128: symm_mem.global @__symm_pool_seed002_0 alignment(128) : memref<384xi8
// ALIGN128-LABEL: func.func @seed002
// ALIGN128-NOT: arith.constant 64 : index
symm_mem.group @"0" world_size(2)
// expected-remark@+1 {{pool @__symm_pool_seed002_0 (#symm_mem.allocator<symmetric, @"0">): 192 bytes for 4 buffers (256 bytes if allocated apart), lower bound 192 bytes (1.00x), 1 reuse}}
func.func @seed002(%arg0: memref<4x4xf32>) -> memref<4x4xf32> {
  %buf0 = symm_mem.alloc() : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">>
  %buf3 = symm_mem.alloc() : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">>
  %buf6 = symm_mem.alloc() : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">>
  memref.copy %arg0, %buf0 : memref<4x4xf32> to memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">>
  memref.copy %arg0, %buf3 : memref<4x4xf32> to memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">>
  memref.copy %arg0, %buf6 : memref<4x4xf32> to memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">>
  %buf1 = symm_mem.all_reduce sum %buf0 group @"0" algorithm one_shot : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">> -> memref<4x4xf32>
  %buf4 = symm_mem.all_reduce sum %buf3 group @"0" algorithm one_shot : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">> -> memref<4x4xf32>
  %buf7 = symm_mem.all_reduce sum %buf6 group @"0" algorithm one_shot : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">> -> memref<4x4xf32>
  %buf9 = symm_mem.alloc() : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">>
  linalg.add ins(%buf4, %buf7 : memref<4x4xf32>, memref<4x4xf32>) outs(%buf9 : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">>)
  %buf10 = symm_mem.all_reduce sum %buf9 group @"0" algorithm one_shot : memref<4x4xf32, #symm_mem.allocator<symmetric, @"0">> -> memref<4x4xf32>
  return %buf10 : memref<4x4xf32>
}
// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// A gate + up pair that symm-linalg-matmul-to-gpu will give one kernel: its
// left operand %xn must not share memory with its output %act, although
// %xn's last reader (the up matmul) comes before %act's first writer (the
// generated kernel reads %xn while it writes %act, and a measured choice
// runs the group more than once).
// Four buffers of 2048 bytes at 16 rows, none reused.
// CHECK-LABEL: func.func @pair_buffers_stay_apart
// CHECK: %[[POOL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<8192xi8>
// CHECK: %[[XN_AT:c0_[0-9]+]] = arith.constant 0 : index
// CHECK-NEXT: %[[XN:.*]] = memref.view %[[POOL]][%[[XN_AT]]][%{{.*}}] : memref<8192xi8> to memref<?x64xbf16>
// CHECK: linalg.matmul ins(%[[XN]],
// CHECK: linalg.matmul ins(%[[XN]],
// CHECK: %[[ACT_AT:.*]] = arith.constant 6144 : index
// CHECK-NEXT: %[[ACT:.*]] = memref.view %[[POOL]][%[[ACT_AT]]][%{{.*}}] : memref<8192xi8> to memref<?x64xbf16>
// CHECK: outs(%[[ACT]] : memref<?x64xbf16>)
// expected-remark@+1 {{regular pool: 8192 bytes for 4 buffers (8192 bytes if allocated apart), lower bound 8192 bytes (1.00x), 0 reuses}}
func.func @pair_buffers_stay_apart(%x: memref<?x64xbf16>, %wg: memref<64x64xbf16>, %wu: memref<64x64xbf16>,
                                   %out: memref<?x64xbf16>) attributes {symm_mem.max_tokens = 16 : i64} {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %xn = memref.alloc(%m) : memref<?x64xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xbf16>) outs(%xn : memref<?x64xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    %y = arith.addf %v, %v : bf16
    linalg.yield %y : bf16
  }
  %gate = memref.alloc(%m) : memref<?x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%gate : memref<?x64xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x64xbf16>, memref<64x64xbf16>) outs(%gate : memref<?x64xbf16>)
  %up = memref.alloc(%m) : memref<?x64xbf16>
  linalg.fill ins(%zero : bf16) outs(%up : memref<?x64xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x64xbf16>, memref<64x64xbf16>) outs(%up : memref<?x64xbf16>)
  memref.dealloc %xn : memref<?x64xbf16>
  %act = memref.alloc(%m) : memref<?x64xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x64xbf16>, memref<?x64xbf16>) outs(%act : memref<?x64xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %o: bf16):
    %y = arith.mulf %g, %u : bf16
    linalg.yield %y : bf16
  }
  memref.copy %act, %out : memref<?x64xbf16> to memref<?x64xbf16>
  memref.dealloc %gate : memref<?x64xbf16>
  memref.dealloc %up : memref<?x64xbf16>
  memref.dealloc %act : memref<?x64xbf16>
  return
}

// -----

// A comm buffer that is returned is copied out into a regular buffer first,
// because its pool is released on return; the copy is what returns.
// CHECK-LABEL: func.func @returned
// CHECK: %[[POOL:.*]] = symm_mem.get_global @__symm_pool_returned_tp
// CHECK: %[[B:.*]] = memref.view %[[POOL]]
// CHECK: symm_mem.all_reduce_out sum %[[B]] into %[[B]] group @tp
// CHECK: %[[CAST:.*]] = memref.memory_space_cast %[[B]]
// CHECK: %[[OUT:.*]] = memref.alloc() : memref<16xf32>
// CHECK: memref.copy %[[CAST]], %[[OUT]] : memref<16xf32> to memref<16xf32>
// CHECK: return %[[OUT]] : memref<16xf32>
symm_mem.group @tp world_size(2)
// expected-remark@+1 {{pool @__symm_pool_returned_tp}}
func.func @returned(%x: memref<16xf32>) -> memref<16xf32> {
  %b = symm_mem.alloc() : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  memref.copy %x, %b : memref<16xf32> to memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %b into %b group @tp : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  %r = memref.memory_space_cast %b : memref<16xf32, #symm_mem.allocator<symmetric, @tp>> to memref<16xf32>
  // expected-remark@+1 {{comm buffer returned from the function: copied out into a regular buffer, since its pool is released on return (operand #0)}}
  return %r : memref<16xf32>
}

// -----

// Liveness covers nested regions: a buffer used inside a loop lives for the
// whole loop, so a buffer defined inside the loop cannot share its bytes;
// two buffers live only within one iteration share theirs. Dynamic shapes
// and buffers that flow into scf.yield stay as they are. Comm buffers of
// different groups never share a pool; regular buffers never share a comm
// pool.
// CHECK-LABEL: func.func @nested
// CHECK-DAG: symm_mem.get_global @__symm_pool_nested_tp : memref<64xi8
// CHECK-DAG: symm_mem.get_global @__symm_pool_nested_dp : memref<64xi8
// CHECK-DAG: memref.alloc() {alignment = 64 : i64} : memref<192xi8>
// CHECK: symm_mem.alloc(%{{.*}}) : memref<?xf32
// CHECK: scf.for
// CHECK: memref.alloc() : memref<4xf32>
// CHECK: scf.yield
symm_mem.group @tp world_size(2)
symm_mem.group @dp world_size(2)
// expected-remark@+3 {{regular pool: 192 bytes for 3 buffers (192 bytes if allocated apart), lower bound 192 bytes (1.00x), 0 reuses}}
// expected-remark@+2 {{pool @__symm_pool_nested_dp (#symm_mem.allocator<symmetric, @dp>): 64 bytes for 1 buffer (64 bytes if allocated apart), lower bound 64 bytes (1.00x), 0 reuses}}
// expected-remark@+1 {{pool @__symm_pool_nested_tp (#symm_mem.allocator<symmetric, @tp>): 64 bytes for 2 buffers (128 bytes if allocated apart), lower bound 64 bytes (1.00x), 1 reuse}}
func.func @nested(%n: index, %init: memref<4xf32>) -> memref<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %outer = memref.alloc() : memref<16xf32>
  %d = symm_mem.alloc(%n) : memref<?xf32, #symm_mem.allocator<symmetric, @tp>>
  %g = symm_mem.alloc() : memref<16xf32, #symm_mem.allocator<symmetric, @dp>>
  %last = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %init) -> memref<4xf32> {
    %inner = memref.alloc() : memref<16xf32>
    memref.copy %outer, %inner : memref<16xf32> to memref<16xf32>
    %s1 = symm_mem.alloc() : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
    memref.copy %inner, %s1 : memref<16xf32> to memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
    symm_mem.dealloc %s1 : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
    %s2 = symm_mem.alloc() : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
    memref.copy %inner, %s2 : memref<16xf32> to memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
    memref.copy %s2, %g : memref<16xf32, #symm_mem.allocator<symmetric, @tp>> to memref<16xf32, #symm_mem.allocator<symmetric, @dp>>
    %tmp = memref.alloc() : memref<16xf32>
    memref.copy %inner, %tmp : memref<16xf32> to memref<16xf32>
    %next = memref.alloc() : memref<4xf32>
    scf.yield %next : memref<4xf32>
  }
  symm_mem.dealloc %d : memref<?xf32, #symm_mem.allocator<symmetric, @tp>>
  return %last : memref<4xf32>
}

// -----

symm_mem.group @tp world_size(2)
// expected-error@+1 {{symm-mem-plan: @returns_comm returns a comm buffer (memref<16xf32, #symm_mem.allocator<symmetric, @tp>>), but pools are released on return; return a memref in the default memory space instead}}
func.func @returns_comm() -> memref<16xf32, #symm_mem.allocator<symmetric, @tp>> {
  %b = symm_mem.alloc() : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  return %b : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
}

// -----

// A function bounding its token count plans dynamic buffers at the bound:
// 16 x 64 x f32 = 4096 bytes, the view keeps the dynamic size.
// CHECK-LABEL: func.func @bounded
// CHECK-SAME: (%[[X:.*]]: memref<?x64xf32>)
// CHECK: %[[POOL:.*]] = memref.alloc() {alignment = 64 : i64} : memref<4096xi8>
// CHECK: %[[N:.*]] = memref.dim %[[X]]
// CHECK: %[[A:.*]] = memref.view %[[POOL]][%{{.*}}][%[[N]]] : memref<4096xi8> to memref<?x64xf32>
// CHECK: memref.copy %[[X]], %[[A]]
// CHECK-NOT: memref.dealloc %[[A]]
// CHECK: memref.dealloc %[[POOL]]
// expected-remark@+1 {{regular pool: 4096 bytes for 1 buffer}}
func.func @bounded(%x: memref<?x64xf32>) attributes {symm_mem.max_tokens = 16 : i64} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  %a = memref.alloc(%n) : memref<?x64xf32>
  memref.copy %x, %a : memref<?x64xf32> to memref<?x64xf32>
  memref.dealloc %a : memref<?x64xf32>
  return
}

// -----

// A memref.alloc in an allocator's memory space is planned like
// symm_mem.alloc: into the pool, never a plain allocation.
symm_mem.group @tp world_size(2)
// CHECK-LABEL: func.func @memref_alloc_in_symmetric_space
// CHECK: %[[P:.*]] = symm_mem.get_global @{{.*}} : memref<{{[0-9]+}}xi8, #[[$TP:.*]]>
// CHECK: %[[B:.*]] = memref.view %[[P]]{{.*}} to memref<1024xbf16, #[[$TP]]>
// CHECK: symm_mem.pool_of %[[B]]
// CHECK-NOT: memref.alloc
// expected-remark@+1 {{pool @__symm_pool_memref_alloc_in_symmetric_space_tp (#symm_mem.allocator<symmetric, @tp>): 2048 bytes for 1 buffer}}
func.func @memref_alloc_in_symmetric_space(%x: memref<1024xbf16>) -> !symm_mem.pool {
  %b = memref.alloc() : memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>
  memref.copy %x, %b : memref<1024xbf16> to memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>
  %p = symm_mem.pool_of %b : memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>
  return %p : !symm_mem.pool
}
