// The allocator attribute, its printed alias, and the symm_mem.*
// attributes that declarations of external collectives carry (seed 004).
// RUN: symm-opt %s | symm-opt | FileCheck %s

// Aliases are named after the group, sanitized to an identifier.
// CHECK-DAG: #[[$TP:symm_tp]] = #symm_mem.allocator<symmetric, @tp>
// CHECK-DAG: #[[$ZERO:symm_0]] = #symm_mem.allocator<symmetric, @"0">
// CHECK-DAG: #[[$DASH:symm_tp_2]] = #symm_mem.allocator<symmetric, @"tp-2">

symm_mem.group @tp world_size(8)
symm_mem.group @"0"
symm_mem.group @"tp-2"

// An external collective: its first operand must be a comm buffer of @tp.
// CHECK-LABEL: func.func private @my_all_reduce
// CHECK-SAME: (memref<1024xf32> {symm_mem.symmetric = #[[$TP]]}, memref<1024xf32>)
func.func private @my_all_reduce(memref<1024xf32> {symm_mem.symmetric = #symm_mem.allocator<symmetric, @tp>}, memref<1024xf32>)

// A custom op that may allocate its results in symmetric memory.
// CHECK-LABEL: func.func private @custom_producer
// CHECK-SAME: attributes {symm_mem.allocates_symmetric}
func.func private @custom_producer(memref<1024xf32>) -> memref<1024xf32> attributes {symm_mem.allocates_symmetric}

// CHECK-LABEL: func.func @types
// CHECK-SAME: memref<4xf32, #[[$ZERO]]>
// CHECK-SAME: memref<4xf32, #[[$DASH]]>
// CHECK-SAME: memref<*xf32, #[[$TP]]>
func.func @types(%a: memref<4xf32, #symm_mem.allocator<symmetric, @"0">>,
                 %b: memref<4xf32, #symm_mem.allocator<symmetric, @"tp-2">>,
                 %c: memref<*xf32, #symm_mem.allocator<symmetric, @tp>>) {
  return
}
