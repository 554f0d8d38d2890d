// The Rust pass, by name, nested under func.func next to an upstream pass,
// and as a per-pass flag.
// RUN: symm-opt %s -split-input-file -verify-diagnostics \
// RUN:   --pass-pipeline='builtin.module(func.func(symm-mem-verify-groups),canonicalize)' \
// RUN:   | FileCheck %s
// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-verify-groups \
// RUN:   | FileCheck %s --check-prefix=FLAG

symm_mem.group @tp world_size(2)
symm_mem.group @dp
symm_mem.global @pool : memref<192xi8, #symm_mem.allocator<symmetric, @tp>>

// Buffers: the argument, the pool and the alloc; the view of the pool is
// not a buffer of its own. The dynamic alloc has no static size.
// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[ARG:.*]]: memref<4x4xf32, #symm_tp>, %[[N:.*]]: index)
// FLAG-LABEL: func.func @buffers
// expected-remark@+2 {{group @tp: world size 2, 3 symmetric buffers (256 bytes + 1 of dynamic size)}}
// expected-remark@+1 {{symmetric buffer of group @tp: argument #0 of type memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>, 64 bytes}}
func.func @buffers(%x: memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>, %n: index) {
  // expected-remark@+1 {{symmetric buffer of group @tp: result of symm_mem.get_global of type memref<192xi8, #symm_mem.allocator<symmetric, @tp>>, 192 bytes}}
  %pool = symm_mem.get_global @pool : memref<192xi8, #symm_mem.allocator<symmetric, @tp>>
  %c64 = arith.constant 64 : index
  %view = memref.view %pool[%c64][] : memref<192xi8, #symm_mem.allocator<symmetric, @tp>> to memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>
  // expected-remark@+1 {{symmetric buffer of group @tp: result of symm_mem.alloc of type memref<?xbf16, #symm_mem.allocator<symmetric, @tp>>, dynamic size}}
  %dyn = symm_mem.alloc(%n) : memref<?xbf16, #symm_mem.allocator<symmetric, @tp>>
  // CHECK: symm_mem.all_reduce_out sum %[[ARG]] into %{{.*}} group @tp
  symm_mem.all_reduce_out sum %x into %view group @tp : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>, memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.dealloc %dyn : memref<?xbf16, #symm_mem.allocator<symmetric, @tp>>
  return
}

// Operands that still need symmetric memory are counted per group; a
// group used only through symm_mem.world_size is reported too. canonicalize
// runs after the pass and folds the dead constant away.
// CHECK-LABEL: func.func @pending
// CHECK-NOT: arith.constant
// CHECK: symm_mem.all_reduce {{.*}} algorithm two_shot
// expected-remark@+2 {{group @tp: world size 2, 0 symmetric buffers (0 bytes), 2 operands awaiting symmetric memory}}
// expected-remark@+1 {{group @dp: world size set at launch, 0 symmetric buffers (0 bytes)}}
func.func @pending(%a: memref<8xf16>, %b: memref<8xf16>) -> index {
  %unused = arith.constant 7 : index
  %0 = symm_mem.all_reduce sum %a group @tp algorithm one_shot : memref<8xf16> -> memref<8xf16>
  %1 = symm_mem.all_reduce max %b group @tp algorithm two_shot : memref<8xf16> -> memref<8xf16>
  %w = symm_mem.world_size @dp
  return %w : index
}

// A function without groups gets no remark.
// CHECK-LABEL: func.func @no_groups
func.func @no_groups(%a: memref<8xf16>) {
  return
}

// -----

// Only the pass sees a comm-buffer type on a function argument, and rejects
// its undeclared group.
symm_mem.group @tp
// expected-error@+1 {{group @ghost is used here but not declared; add `symm_mem.group @ghost` to the module}}
func.func @undeclared(%x: memref<4xf32, #symm_mem.allocator<symmetric, @ghost>>) {
  return
}
