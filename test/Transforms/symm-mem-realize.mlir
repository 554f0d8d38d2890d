// RUN: symm-opt %s --symm-mem-realize -split-input-file -verify-diagnostics | FileCheck %s

// CHECK: #[[$TP:.*]] = #symm_mem.allocator<symmetric, @tp>
symm_mem.group @tp world_size(2)
func.func private @consume(memref<16xf32>)
func.func private @opaque(memref<16xf32>) -> memref<16xf32>
func.func private @custom(memref<16xf32>) -> memref<16xf32> attributes {symm_mem.allocates_symmetric}
func.func private @external_all_reduce(memref<16xf32> {symm_mem.symmetric = #symm_mem.allocator<symmetric, @tp>})

// Path 1: the function allocates the buffer, so the allocation itself moves
// into symmetric memory. The new type follows the views; the call that
// needs the old type gets a cast; the dealloc becomes symm_mem.dealloc.
// CHECK-LABEL: func.func @path1_retype
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>)
func.func @path1_retype(%x: memref<16xf32>) -> memref<16xf32> {
  // CHECK: %[[A:.*]] = symm_mem.alloc() : memref<16xf32, #[[$TP]]>
  // CHECK-NOT: memref.alloc
  %a = memref.alloc() : memref<16xf32>
  // CHECK: memref.copy %[[X]], %[[A]] : memref<16xf32> to memref<16xf32, #[[$TP]]>
  memref.copy %x, %a : memref<16xf32> to memref<16xf32>
  // CHECK: %[[S:.*]] = memref.subview %[[A]][0] [16] [1] : memref<16xf32, #[[$TP]]> to memref<16xf32, strided<[1]>, #[[$TP]]>
  %s = memref.subview %a[0][16][1] : memref<16xf32> to memref<16xf32, strided<[1]>>
  // CHECK: %[[C:.*]] = memref.cast %[[S]] : memref<16xf32, strided<[1]>, #[[$TP]]> to memref<16xf32, #[[$TP]]>
  %c = memref.cast %s : memref<16xf32, strided<[1]>> to memref<16xf32>
  // CHECK: symm_mem.all_reduce sum %[[C]] group @tp : memref<16xf32, #[[$TP]]> -> memref<16xf32>
  // expected-remark@+1 {{symmetric operand #0 of symm_mem.all_reduce (#symm_mem.allocator<symmetric, @tp>): path 1, zero copy: its allocation becomes a symmetric allocation}}
  %r = symm_mem.all_reduce sum %c group @tp : memref<16xf32> -> memref<16xf32>
  // CHECK: %[[BACK:.*]] = memref.memory_space_cast %[[A]] : memref<16xf32, #[[$TP]]> to memref<16xf32>
  // CHECK: call @consume(%[[BACK]])
  func.call @consume(%a) : (memref<16xf32>) -> ()
  // CHECK: symm_mem.dealloc %[[A]] : memref<16xf32, #[[$TP]]>
  memref.dealloc %a : memref<16xf32>
  return %r : memref<16xf32>
}

// Path 1 inside a loop; a second collective on the same buffer needs
// nothing more.
// CHECK-LABEL: func.func @path1_loop
func.func @path1_loop(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // CHECK: %[[A:.*]] = symm_mem.alloc() : memref<8xf16, #[[$TP]]>
  %a = memref.alloc() : memref<8xf16>
  %o = memref.alloc() : memref<8xf16>
  scf.for %i = %c0 to %n step %c1 {
    // CHECK: symm_mem.all_reduce_out sum %[[A]] into {{.*}} algorithm one_shot
    // expected-remark@+1 {{path 1, zero copy}}
    symm_mem.all_reduce_out sum %a into %o group @tp algorithm one_shot : memref<8xf16>, memref<8xf16>
    // CHECK: symm_mem.all_reduce_out max %[[A]] into {{.*}} algorithm two_shot
    symm_mem.all_reduce_out max %a into %o group @tp algorithm two_shot : memref<8xf16>, memref<8xf16>
  }
  return
}

// A two-shot whose input nothing reads afterwards gets its output (our own
// allocation) in symmetric memory too, for its push; not when the input is
// read later (the last two-shot: %b is copied out after it).
// CHECK-LABEL: func.func @two_shot_output
// CHECK: %[[A:.*]] = symm_mem.alloc() : memref<64xf32, #[[$TP]]>
// CHECK: %[[O:.*]] = symm_mem.alloc() : memref<64xf32, #[[$TP]]>
// CHECK: %[[B:.*]] = symm_mem.alloc() : memref<64xf32, #[[$TP]]>
// CHECK: %[[P:.*]] = memref.alloc() : memref<64xf32>
// CHECK: symm_mem.all_reduce_out sum %[[A]] into %[[O]] {{.*}} algorithm two_shot
// CHECK: symm_mem.all_reduce_out sum %[[B]] into %[[P]] {{.*}} algorithm two_shot
func.func @two_shot_output(%x: memref<64xf32>, %y: memref<64xf32>) {
  %a = memref.alloc() : memref<64xf32>
  %o = memref.alloc() : memref<64xf32>
  %b = memref.alloc() : memref<64xf32>
  %p = memref.alloc() : memref<64xf32>
  memref.copy %x, %a : memref<64xf32> to memref<64xf32>
  memref.copy %x, %b : memref<64xf32> to memref<64xf32>
  // expected-remark@+2 {{symmetric operand #0 of symm_mem.all_reduce_out (#symm_mem.allocator<symmetric, @tp>): path 1, zero copy}}
  // expected-remark@+1 {{symmetric operand #1 of symm_mem.all_reduce_out (#symm_mem.allocator<symmetric, @tp>): path 1, zero copy}}
  symm_mem.all_reduce_out sum %a into %o group @tp algorithm two_shot : memref<64xf32>, memref<64xf32>
  // expected-remark@+1 {{symmetric operand #0 of symm_mem.all_reduce_out (#symm_mem.allocator<symmetric, @tp>): path 1, zero copy}}
  symm_mem.all_reduce_out sum %b into %p group @tp algorithm two_shot : memref<64xf32>, memref<64xf32>
  memref.copy %b, %y : memref<64xf32> to memref<64xf32>
  return
}

// Path 2: a statically shaped argument gets one persistent buffer, filled
// by a copy right before each use.
// CHECK: symm_mem.global @[[$G:__symm_input_path2_argument_arg0]] : memref<4x4xf32, #[[$TP]]>
// CHECK-LABEL: func.func @path2_argument
// CHECK-SAME: (%[[X:.*]]: memref<4x4xf32>)
func.func @path2_argument(%x: memref<4x4xf32>) -> (memref<4x4xf32>, memref<4x4xf32>) {
  // CHECK: %[[P:.*]] = symm_mem.get_global @[[$G]] : memref<4x4xf32, #[[$TP]]>
  // CHECK-NEXT: memref.copy %[[X]], %[[P]]
  // CHECK-NEXT: symm_mem.all_reduce sum %[[P]] group @tp algorithm one_shot
  // expected-remark@+1 {{symmetric operand #0 of symm_mem.all_reduce (#symm_mem.allocator<symmetric, @tp>): path 2: function argument #0 is copied (DMA) into the persistent symmetric buffer @__symm_input_path2_argument_arg0, allocated once}}
  %r = symm_mem.all_reduce sum %x group @tp algorithm one_shot : memref<4x4xf32> -> memref<4x4xf32>
  // CHECK: %[[P2:.*]] = symm_mem.get_global @[[$G]] : memref<4x4xf32, #[[$TP]]>
  // CHECK-NEXT: memref.copy %[[X]], %[[P2]]
  // CHECK-NEXT: symm_mem.all_reduce sum %[[P2]] group @tp algorithm two_shot
  // expected-remark@+1 {{path 2}}
  %s = symm_mem.all_reduce sum %x group @tp algorithm two_shot : memref<4x4xf32> -> memref<4x4xf32>
  return %r, %s : memref<4x4xf32>, memref<4x4xf32>
}

// Path 3: dynamic shapes, and buffers that an opaque call produced, are
// copied into a fresh symmetric buffer that is released after the use.
// CHECK-LABEL: func.func @path3_fallback
// CHECK-SAME: (%[[D:.*]]: memref<?xf32>, %[[Y:.*]]: memref<16xf32>)
func.func @path3_fallback(%d: memref<?xf32>, %y: memref<16xf32>) -> (memref<?xf32>, memref<16xf32>) {
  // CHECK: %[[N:.*]] = memref.dim %[[D]], %{{.*}} : memref<?xf32>
  // CHECK: %[[T:.*]] = symm_mem.alloc(%[[N]]) : memref<?xf32, #[[$TP]]>
  // CHECK: memref.copy %[[D]], %[[T]]
  // CHECK: symm_mem.all_reduce sum %[[T]] group @tp
  // CHECK-NEXT: symm_mem.dealloc %[[T]]
  // expected-remark@+1 {{path 3, identity copy into a fresh symmetric buffer: its shape is dynamic, so it cannot have a persistent buffer}}
  %r = symm_mem.all_reduce sum %d group @tp : memref<?xf32> -> memref<?xf32>
  // CHECK: %[[O:.*]] = call @opaque(%[[Y]])
  %o = func.call @opaque(%y) : (memref<16xf32>) -> memref<16xf32>
  // CHECK: %[[T2:.*]] = symm_mem.alloc() : memref<16xf32, #[[$TP]]>
  // CHECK: memref.copy %[[O]], %[[T2]]
  // CHECK: symm_mem.all_reduce sum %[[T2]] group @tp
  // CHECK-NEXT: symm_mem.dealloc %[[T2]]
  // expected-remark@+1 {{path 3, identity copy into a fresh symmetric buffer: it is produced by func.call, whose allocation the compiler does not own}}
  %s = symm_mem.all_reduce sum %o group @tp : memref<16xf32> -> memref<16xf32>
  return %r, %s : memref<?xf32>, memref<16xf32>
}

// An external collective declares its symmetric parameter (seed 004). The
// callee may write it, so the copy goes back after the call; the callee's
// signature keeps its type through a cast.
// CHECK-LABEL: func.func @external_collective
// CHECK-SAME: (%[[Y:.*]]: memref<16xf32>)
func.func @external_collective(%y: memref<16xf32>) {
  // CHECK: %[[O:.*]] = call @opaque(%[[Y]])
  %o = func.call @opaque(%y) : (memref<16xf32>) -> memref<16xf32>
  // CHECK: %[[T:.*]] = symm_mem.alloc() : memref<16xf32, #[[$TP]]>
  // CHECK: memref.copy %[[O]], %[[T]]
  // CHECK: %[[CAST:.*]] = memref.memory_space_cast %[[T]] : memref<16xf32, #[[$TP]]> to memref<16xf32>
  // CHECK: call @external_all_reduce(%[[CAST]])
  // CHECK-NEXT: memref.copy %[[T]], %[[O]]
  // CHECK-NEXT: symm_mem.dealloc %[[T]]
  // expected-remark@+1 {{symmetric operand #0 of func.call (#symm_mem.allocator<symmetric, @tp>): path 3, identity copy into a fresh symmetric buffer and back: it is produced by func.call}}
  func.call @external_all_reduce(%o) : (memref<16xf32>) -> ()
  // A buffer the function allocates takes path 1 even for a call.
  // CHECK: %[[A:.*]] = symm_mem.alloc() : memref<16xf32, #[[$TP]]>
  %a = memref.alloc() : memref<16xf32>
  // CHECK: %[[ACAST:.*]] = memref.memory_space_cast %[[A]]
  // CHECK: call @external_all_reduce(%[[ACAST]])
  // expected-remark@+1 {{path 1, zero copy}}
  func.call @external_all_reduce(%a) : (memref<16xf32>) -> ()
  return
}

// A custom op that may allocate its results in symmetric memory runs under
// symm_mem.with_allocator (seed 004): no copy.
// CHECK-LABEL: func.func @custom_op
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>)
func.func @custom_op(%x: memref<16xf32>) -> memref<16xf32> {
  // CHECK: %[[W:.*]] = symm_mem.with_allocator #[[$TP]] -> memref<16xf32, #[[$TP]]> {
  // CHECK-NEXT: %[[C:.*]] = func.call @custom(%[[X]])
  // CHECK-NEXT: symm_mem.yield %[[C]] : memref<16xf32>
  // CHECK-NEXT: }
  %y = func.call @custom(%x) : (memref<16xf32>) -> memref<16xf32>
  // CHECK: symm_mem.all_reduce sum %[[W]] group @tp : memref<16xf32, #[[$TP]]>
  // expected-remark@+1 {{custom op: @custom may allocate its results in symmetric memory, so the call now runs under symm_mem.with_allocator (no copy)}}
  %r = symm_mem.all_reduce sum %y group @tp : memref<16xf32> -> memref<16xf32>
  // CHECK: symm_mem.dealloc %[[W]]
  memref.dealloc %y : memref<16xf32>
  return %r : memref<16xf32>
}

// Already symmetric: nothing to do, no remark.
// CHECK-LABEL: func.func @already_symmetric
// CHECK-NEXT: symm_mem.all_reduce sum %arg0
func.func @already_symmetric(%x: memref<16xf32, #symm_mem.allocator<symmetric, @tp>>) -> memref<16xf32> {
  %r = symm_mem.all_reduce sum %x group @tp : memref<16xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<16xf32>
  return %r : memref<16xf32>
}

// -----

// An external declaration may name an undeclared group; realize rejects it.
symm_mem.group @tp
func.func private @external(memref<4xf32> {symm_mem.symmetric = #symm_mem.allocator<symmetric, @ghost>})
func.func @undeclared(%x: memref<4xf32>) {
  // expected-error@+1 {{symmetric operand #0 of func.call (#symm_mem.allocator<symmetric, @ghost>) names the undeclared group @ghost; declare it with `symm_mem.group`}}
  func.call @external(%x) : (memref<4xf32>) -> ()
  return
}
