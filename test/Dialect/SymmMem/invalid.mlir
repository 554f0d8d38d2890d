// One case per verifier error of the symm_mem dialect.
// RUN: symm-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// #symm_mem.allocator
//===----------------------------------------------------------------------===//

// expected-error@+2 {{failed to parse SymmMem_AllocatorAttr parameter 'kind'}}
// expected-error@+1 {{expected ::symm::symm_mem::AllocatorKind to be one of: symmetric}}
func.func @unknown_allocator_kind(%x: memref<4xf32, #symm_mem.allocator<nvshmem, @tp>>)

// -----

// expected-error@+1 {{#symm_mem.allocator needs a non-empty group name}}
func.func @empty_group(%x: memref<4xf32, #symm_mem.allocator<symmetric, @"">>)

//===----------------------------------------------------------------------===//
// Attributes on external functions (seed 004)
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'symm_mem.symmetric' must be an #symm_mem.allocator attribute naming the allocator and group, got "tp"}}
func.func private @symmetric_not_allocator(memref<4xf32> {symm_mem.symmetric = "tp"})

// -----

// expected-error@+1 {{'symm_mem.symmetric' on argument #1 requires a ranked memref argument, got 'f32'}}
func.func private @symmetric_on_scalar(memref<4xf32>, f32 {symm_mem.symmetric = #symm_mem.allocator<symmetric, @tp>})

// -----

// No path can place an unranked buffer in symmetric memory.
// expected-error@+1 {{'symm_mem.symmetric' on argument #0 requires a ranked memref argument, got 'memref<*xf32>'}}
func.func private @symmetric_on_unranked(memref<*xf32> {symm_mem.symmetric = #symm_mem.allocator<symmetric, @tp>})

// -----

// expected-error@+1 {{'symm_mem.symmetric' on argument #0 requires the default memory space or #symm_mem.allocator<symmetric, @tp>, got 'memref<4xf32, 1>'}}
func.func private @symmetric_in_other_space(memref<4xf32, 1> {symm_mem.symmetric = #symm_mem.allocator<symmetric, @tp>})

// -----

// expected-error@+1 {{'symm_mem.symetric' is not a symm_mem argument attribute; the only one is 'symm_mem.symmetric'}}
func.func private @misspelled_arg_attr(memref<4xf32> {symm_mem.symetric = #symm_mem.allocator<symmetric, @tp>})

// -----

// expected-error@+1 {{'symm_mem.allocates_symmetric' is a unit attribute, got true}}
func.func private @allocates_not_unit(memref<4xf32>) -> memref<4xf32> attributes {symm_mem.allocates_symmetric = true}

// -----

func.func @allocates_on_non_function() {
  // expected-error@+1 {{'symm_mem.allocates_symmetric' is only valid on functions}}
  %c = arith.constant {symm_mem.allocates_symmetric} 0 : index
  return
}

// -----

// expected-error@+1 {{'symm_mem.symmetric' is an argument attribute; put it on a function argument, not on the operation}}
func.func private @symmetric_on_op(memref<4xf32>) attributes {symm_mem.symmetric = #symm_mem.allocator<symmetric, @tp>}

// -----

// expected-error@+1 {{'symm_mem.colective' is not a symm_mem attribute}}
func.func private @unknown_op_attr(memref<4xf32>) attributes {symm_mem.colective}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'symm_mem.group' op attribute 'world_size' failed to satisfy constraint: 64-bit signless integer attribute whose value is positive}}
symm_mem.group @tp world_size(0)

// -----

func.func @rank_of_undeclared_group() -> index {
  // expected-error@+1 {{'symm_mem.rank' op refers to undeclared group @tp; declare it with `symm_mem.group @tp`}}
  %r = symm_mem.rank @tp
  return %r : index
}

// -----

symm_mem.group @tp
func.func @world_size_of_undeclared_group() -> index {
  // expected-error@+1 {{'symm_mem.world_size' op refers to undeclared group @pt}}
  %w = symm_mem.world_size @pt
  return %w : index
}

//===----------------------------------------------------------------------===//
// symm_mem.global, get_global, alloc, dealloc
//===----------------------------------------------------------------------===//

// -----

// expected-error@+1 {{'symm_mem.global' op must have a comm-buffer type (a memref in an #symm_mem.allocator memory space), got 'memref<16xi8>'}}
symm_mem.global @regular : memref<16xi8>

// -----

symm_mem.group @tp
// expected-error@+1 {{'symm_mem.global' op is allocated once, so its shape must be static}}
symm_mem.global @dynamic : memref<?xi8, #symm_mem.allocator<symmetric, @tp>>

// -----

symm_mem.group @tp
// expected-error@+1 {{'symm_mem.global' op must have an identity layout}}
symm_mem.global @strided : memref<4x4xf32, strided<[8, 1]>, #symm_mem.allocator<symmetric, @tp>>

// -----

symm_mem.group @tp
// expected-error@+1 {{'symm_mem.global' op alignment must be a power of two, got 96}}
symm_mem.global @misaligned alignment(96) : memref<16xi8, #symm_mem.allocator<symmetric, @tp>>

// -----

// expected-error@+1 {{'symm_mem.global' op refers to undeclared group @tp}}
symm_mem.global @no_group : memref<16xi8, #symm_mem.allocator<symmetric, @tp>>

// -----

symm_mem.group @tp
func.func @get_missing_global() {
  // expected-error@+1 {{'symm_mem.get_global' op @missing does not name a symm_mem.global}}
  %0 = symm_mem.get_global @missing : memref<16xi8, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

symm_mem.group @tp
symm_mem.global @pool : memref<16xi8, #symm_mem.allocator<symmetric, @tp>>
func.func @get_global_wrong_type() {
  // expected-error@+1 {{'symm_mem.get_global' op result type 'memref<32xi8, #symm_mem.allocator<symmetric, @tp>>' does not match the type 'memref<16xi8, #symm_mem.allocator<symmetric, @tp>>' of global @pool}}
  %0 = symm_mem.get_global @pool : memref<32xi8, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

func.func @get_global_regular_type() {
  // expected-error@+1 {{'symm_mem.get_global' op result #0 must be memref in a #symm_mem.allocator memory space, but got 'memref<16xi8>'}}
  %0 = symm_mem.get_global @pool : memref<16xi8>
  return
}

// -----

symm_mem.group @tp
func.func @alloc_size_count(%n: index) {
  // expected-error@+1 {{'symm_mem.alloc' op has 1 dynamic size operands but its type 'memref<?x?xf32, #symm_mem.allocator<symmetric, @tp>>' has 2 dynamic dimensions}}
  %0 = symm_mem.alloc(%n) : memref<?x?xf32, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

symm_mem.group @tp
func.func @alloc_strided() {
  // expected-error@+1 {{'symm_mem.alloc' op must have an identity layout}}
  %0 = symm_mem.alloc() : memref<4x4xf32, strided<[8, 1]>, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

func.func @alloc_regular_memory() {
  // expected-error@+1 {{'symm_mem.alloc' op result #0 must be memref in a #symm_mem.allocator memory space, but got 'memref<4xf32>'}}
  %0 = symm_mem.alloc() : memref<4xf32>
  return
}

// -----

func.func @alloc_undeclared_group() {
  // expected-error@+1 {{'symm_mem.alloc' op refers to undeclared group @tp}}
  %0 = symm_mem.alloc() : memref<4xf32, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

func.func @dealloc_regular_memory(%x: memref<4xf32>) {
  // expected-error@+1 {{'symm_mem.dealloc' op operand #0 must be memref in a #symm_mem.allocator memory space, but got 'memref<4xf32>'}}
  symm_mem.dealloc %x : memref<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// symm_mem.with_allocator
//===----------------------------------------------------------------------===//

// -----

symm_mem.group @tp
func.func @with_allocator_count(%x: memref<4xf32>) {
  // expected-error@+1 {{'symm_mem.with_allocator' op yields 1 values but has 0 results}}
  symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp> {
    symm_mem.yield %x : memref<4xf32>
  }
  return
}

// -----

symm_mem.group @tp
func.func @with_allocator_result_space(%x: memref<4xf32>) {
  // expected-error@+1 {{'symm_mem.with_allocator' op result #0 must be in the memory space #symm_mem.allocator<symmetric, @tp>, got 'memref<4xf32>'}}
  %0 = symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp> -> memref<4xf32> {
    symm_mem.yield %x : memref<4xf32>
  }
  return
}

// -----

symm_mem.group @tp
func.func @with_allocator_yield_space(%x: memref<4xf32, #symm_mem.allocator<symmetric, @tp>>) {
  // expected-error@+1 {{'symm_mem.with_allocator' op yielded value #0 must be in the default memory space}}
  %0 = symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp> -> memref<4xf32, #symm_mem.allocator<symmetric, @tp>> {
    symm_mem.yield %x : memref<4xf32, #symm_mem.allocator<symmetric, @tp>>
  }
  return
}

// -----

symm_mem.group @tp
func.func @with_allocator_shape(%x: memref<4xf32>) {
  // expected-error@+1 {{'symm_mem.with_allocator' op result #0 type 'memref<8xf32, #symm_mem.allocator<symmetric, @tp>>' must match the yielded type 'memref<4xf32>' except for the memory space}}
  %0 = symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp> -> memref<8xf32, #symm_mem.allocator<symmetric, @tp>> {
    symm_mem.yield %x : memref<4xf32>
  }
  return
}

// -----

func.func @with_allocator_undeclared_group() {
  // expected-error@+1 {{'symm_mem.with_allocator' op refers to undeclared group @tp}}
  symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp> {
    symm_mem.yield
  }
  return
}

// -----

symm_mem.group @tp
func.func @with_allocator_terminator() {
  // expected-error@+1 {{'symm_mem.with_allocator' op region must end with symm_mem.yield}}
  symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp> {
    func.return
  }
  return
}

// -----

func.func @yield_outside() {
  // expected-error@+1 {{'symm_mem.yield' op expects parent op 'symm_mem.with_allocator'}}
  symm_mem.yield
}

//===----------------------------------------------------------------------===//
// All-reduce
//===----------------------------------------------------------------------===//

// -----

// The algorithm is one of auto, one_shot, two_shot; the old op names
// (one_shot_all_reduce, two_shot_all_reduce and their _out forms) are gone.
symm_mem.group @tp world_size(2)
func.func @unknown_algorithm(%x: memref<4xf32, #symm_mem.allocator<symmetric, @tp>>) {
  // expected-error@+1 {{custom op 'symm_mem.all_reduce' expected string or keyword containing one of the following enum values for attribute 'algorithm' [auto, one_shot, two_shot]}}
  %0 = symm_mem.all_reduce sum %x group @tp algorithm three_shot : memref<4xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<4xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @old_spelling(%x: memref<4xf32, #symm_mem.allocator<symmetric, @tp>>) {
  // expected-error@+1 {{custom op 'symm_mem.one_shot_all_reduce' is unknown}}
  %0 = symm_mem.one_shot_all_reduce sum %x group @tp : memref<4xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<4xf32>
  return
}

// -----

symm_mem.group @tp
func.func @unknown_reduction(%x: memref<4xf32>) {
  // expected-error@+1 {{expected string or keyword containing one of the following enum values for attribute 'reduction' [sum, max, min]}}
  %0 = symm_mem.all_reduce avg %x group @tp : memref<4xf32> -> memref<4xf32>
  return
}

// -----

symm_mem.group @tp
func.func @unknown_reduction_generic(%x: memref<4xf32>) {
  // expected-error@+1 {{invalid properties {group = @tp, reduction = 7 : i32} for op symm_mem.all_reduce}}
  %0 = "symm_mem.all_reduce"(%x) <{group = @tp, reduction = 7 : i32}> : (memref<4xf32>) -> memref<4xf32>
  return
}

// -----

symm_mem.group @tp
func.func @input_in_other_memory_space(%x: memref<4xf32, 1>) {
  // expected-error@+1 {{'symm_mem.all_reduce' op input must be a comm buffer of group @tp or in the default memory space (symm-mem-realize places it), but its memory space is 1 : i64}}
  %0 = symm_mem.all_reduce sum %x group @tp : memref<4xf32, 1> -> memref<4xf32>
  return
}

// -----

symm_mem.group @tp
symm_mem.group @dp
func.func @input_group_disagrees(%x: memref<4xf32, #symm_mem.allocator<symmetric, @dp>>) {
  // expected-error@+1 {{'symm_mem.all_reduce' op group names disagree: the op runs in group @tp but its input is a comm buffer of group @dp}}
  %0 = symm_mem.all_reduce sum %x group @tp algorithm one_shot : memref<4xf32, #symm_mem.allocator<symmetric, @dp>> -> memref<4xf32>
  return
}

// -----

symm_mem.group @tp
symm_mem.group @dp
func.func @out_group_disagrees(%x: memref<4xf32>, %y: memref<4xf32, #symm_mem.allocator<symmetric, @dp>>) {
  // expected-error@+1 {{'symm_mem.all_reduce_out' op group names disagree: the op runs in group @tp but its out is a comm buffer of group @dp}}
  symm_mem.all_reduce_out sum %x into %y group @tp algorithm two_shot : memref<4xf32>, memref<4xf32, #symm_mem.allocator<symmetric, @dp>>
  return
}

// -----

symm_mem.group @tp
func.func @out_in_other_memory_space(%x: memref<4xf32>, %y: memref<4xf32, 3>) {
  // expected-error@+1 {{'symm_mem.all_reduce_out' op out must be in the default memory space or a comm buffer of group @tp, but its memory space is 3 : i64}}
  symm_mem.all_reduce_out sum %x into %y group @tp : memref<4xf32>, memref<4xf32, 3>
  return
}

// -----

symm_mem.group @tp
func.func @element_types_differ(%x: memref<4xf32>) {
  // expected-error@+1 {{'symm_mem.all_reduce' op element types do not match: input has 'f32' but result has 'bf16'}}
  %0 = symm_mem.all_reduce sum %x group @tp : memref<4xf32> -> memref<4xbf16>
  return
}

// -----

symm_mem.group @tp
func.func @shapes_differ(%x: memref<4x4xf16>, %y: memref<4x8xf16>) {
  // expected-error@+1 {{'symm_mem.all_reduce_out' op shapes do not match: input is 4x4 but out is 4x8}}
  symm_mem.all_reduce_out max %x into %y group @tp algorithm one_shot : memref<4x4xf16>, memref<4x8xf16>
  return
}

// -----

symm_mem.group @tp
func.func @unsupported_element_type(%x: memref<4xi32>) {
  // expected-error@+1 {{'symm_mem.all_reduce' op operand #0 must be memref of 32-bit float or 16-bit float or bfloat16 type values, but got 'memref<4xi32>'}}
  %0 = symm_mem.all_reduce sum %x group @tp : memref<4xi32> -> memref<4xi32>
  return
}

// -----

symm_mem.group @tp
func.func @strided_input(%x: memref<4x4xf32, strided<[8, 1]>>) {
  // expected-error@+1 {{'symm_mem.all_reduce' op input must have an identity layout (a contiguous row-major buffer), got 'memref<4x4xf32, strided<[8, 1]>>'}}
  %0 = symm_mem.all_reduce sum %x group @tp : memref<4x4xf32, strided<[8, 1]>> -> memref<4x4xf32>
  return
}

// -----

func.func @all_reduce_undeclared_group(%x: memref<4xf32>) {
  // expected-error@+1 {{'symm_mem.all_reduce' op refers to undeclared group @tp}}
  %0 = symm_mem.all_reduce sum %x group @tp : memref<4xf32> -> memref<4xf32>
  return
}

//===----------------------------------------------------------------------===//
// All-gather + matmul
//===----------------------------------------------------------------------===//

// -----

symm_mem.group @tp
func.func @agmm_not_2d(%a: memref<4x8x2xf32>, %b: memref<8x16xf32>) {
  // expected-error@+1 {{'symm_mem.all_gather_matmul' op a must be a 2-D memref, got 'memref<4x8x2xf32>'}}
  %0 = symm_mem.all_gather_matmul %a, %b group @tp : memref<4x8x2xf32>, memref<8x16xf32> -> memref<8x16xf32>
  return
}

// -----

symm_mem.group @tp
func.func @agmm_contraction(%a: memref<4x8xf32>, %b: memref<6x16xf32>) {
  // expected-error@+1 {{'symm_mem.all_gather_matmul' op shapes do not match: a is 4x8 and b is 6x16, but a's columns must equal b's rows}}
  %0 = symm_mem.all_gather_matmul %a, %b group @tp : memref<4x8xf32>, memref<6x16xf32> -> memref<8x16xf32>
  return
}

// -----

symm_mem.group @tp
func.func @agmm_columns(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<8x12xf32>) {
  // expected-error@+1 {{'symm_mem.all_gather_matmul_out' op shapes do not match: b is 8x16 but out is 8x12; both need the same number of columns}}
  symm_mem.all_gather_matmul_out %a, %b into %c group @tp : memref<4x8xf32>, memref<8x16xf32>, memref<8x12xf32>
  return
}

// -----

symm_mem.group @tp
func.func @agmm_rows_not_multiple(%a: memref<4x8xf32>, %b: memref<8x16xf32>) {
  // expected-error@+1 {{'symm_mem.all_gather_matmul' op shapes do not match: result has 10 rows, which is not a multiple of the 4 rows of the shard a}}
  %0 = symm_mem.all_gather_matmul %a, %b group @tp : memref<4x8xf32>, memref<8x16xf32> -> memref<10x16xf32>
  return
}

// -----

symm_mem.group @tp world_size(4)
func.func @agmm_rows_vs_world_size(%a: memref<4x8xf32>, %b: memref<8x16xf32>) {
  // expected-error@+1 {{'symm_mem.all_gather_matmul' op shapes do not match: result has 8 rows, but group @tp gathers 4 shards of 4 rows}}
  %0 = symm_mem.all_gather_matmul %a, %b group @tp : memref<4x8xf32>, memref<8x16xf32> -> memref<8x16xf32>
  return
}

// -----

symm_mem.group @tp
func.func @agmm_element_types(%a: memref<4x8xbf16>, %b: memref<8x16xf16>) {
  // expected-error@+1 {{'symm_mem.all_gather_matmul' op element types do not match: a has 'bf16' but b has 'f16'}}
  %0 = symm_mem.all_gather_matmul %a, %b group @tp : memref<4x8xbf16>, memref<8x16xf16> -> memref<8x16xbf16>
  return
}

// -----

symm_mem.group @tp
symm_mem.group @dp
func.func @agmm_b_group(%a: memref<4x8xf32>, %b: memref<8x16xf32, #symm_mem.allocator<symmetric, @dp>>) {
  // expected-error@+1 {{'symm_mem.all_gather_matmul' op group names disagree: the op runs in group @tp but its b is a comm buffer of group @dp}}
  %0 = symm_mem.all_gather_matmul %a, %b group @tp : memref<4x8xf32>, memref<8x16xf32, #symm_mem.allocator<symmetric, @dp>> -> memref<8x16xf32>
  return
}

//===----------------------------------------------------------------------===//
// Low-level ops
//===----------------------------------------------------------------------===//

// -----

func.func @pool_of_regular(%x: memref<4xf32>) {
  // expected-error@+1 {{'symm_mem.pool_of' op operand #0 must be memref in a #symm_mem.allocator memory space, but got 'memref<4xf32>'}}
  %0 = symm_mem.pool_of %x : memref<4xf32>
  return
}

// -----

func.func @pool_of_undeclared_group(%x: memref<4xf32, #symm_mem.allocator<symmetric, @tp>>) {
  // expected-error@+1 {{'symm_mem.pool_of' op refers to undeclared group @tp}}
  %0 = symm_mem.pool_of %x : memref<4xf32, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

symm_mem.group @tp
gpu.module @kernels {
  gpu.func @k(%x: memref<4xf32, #symm_mem.allocator<symmetric, @tp>>) kernel {
    // expected-error@+1 {{'symm_mem.pool_of' op runs on the host: pass its result to the kernel as a gpu.launch_func operand}}
    %0 = symm_mem.pool_of %x : memref<4xf32, #symm_mem.allocator<symmetric, @tp>>
    gpu.return
  }
}

// -----

func.func @barrier_on_host(%pool: !symm_mem.pool, %c: index) {
  // expected-error@+1 {{'symm_mem.barrier' op is a device op: it belongs in GPU code (a gpu.func, a gpu.launch body or a function of a gpu.module)}}
  symm_mem.barrier %pool channel %c
  return
}

// -----

func.func @peer_ptr_on_host(%pool: !symm_mem.pool, %p: index, %x: !llvm.ptr) {
  // expected-error@+1 {{'symm_mem.peer_ptr' op is a device op}}
  %0 = symm_mem.peer_ptr %pool[%p], %x : !llvm.ptr
  return
}

// -----

gpu.module @kernels {
  gpu.func @k(%pool: !symm_mem.pool, %x: memref<4xf32>, %p: index) kernel {
    // expected-error@+1 {{'symm_mem.peer_view' op failed to verify that all of {buffer, result} have same type}}
    %0 = "symm_mem.peer_view"(%x, %p, %pool) : (memref<4xf32>, index, !symm_mem.pool) -> memref<8xf32>
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%pool: !symm_mem.pool, %x: memref<4xf32>, %p: index) kernel {
    // expected-error@+1 {{'symm_mem.peer_ptr' op operand #2 must be LLVM pointer, but got 'memref<4xf32>'}}
    %0 = "symm_mem.peer_ptr"(%pool, %p, %x) : (!symm_mem.pool, index, memref<4xf32>) -> !llvm.ptr
    gpu.return
  }
}

// -----

gpu.module @kernels {
  gpu.func @k(%pool: !symm_mem.pool, %c: index, %n: i64) kernel {
    // expected-error@+1 {{'symm_mem.wait_counter' op operand #3 must be 32-bit signless integer, but got 'i64'}}
    "symm_mem.wait_counter"(%pool, %c, %c, %n) : (!symm_mem.pool, index, index, i64) -> ()
    gpu.return
  }
}

// -----

// expected-error@+1 {{unknown  type `pools` in dialect `symm_mem`}}
func.func @unknown_type(%p: !symm_mem.pools)

// -----

symm_mem.group @tp world_size(2)
func.func @epilogue_operand_shape(%p: memref<8x64xf32>, %b: memref<8xf32>, %y: memref<8x64xf32>) {
  // expected-error@+1 {{epilogue operand #0 is 8, but it must have out's shape (8x64) or be 1-D with out's 64 columns}}
  symm_mem.all_reduce_epilogue_out sum %p epilogue(%b : memref<8xf32>) into %y group @tp algorithm auto {
  ^bb0(%r: f32, %bv: f32):
    symm_mem.epilogue_yield %r : f32
  } : memref<8x64xf32>, memref<8x64xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @epilogue_arguments(%p: memref<8x64xf32>, %y: memref<8x64xf32>) {
  // expected-error@+1 {{epilogue region takes 2 arguments, but needs 1}}
  symm_mem.all_reduce_epilogue_out sum %p into %y group @tp algorithm one_shot {
  ^bb0(%r: f32, %extra: f32):
    symm_mem.epilogue_yield %r : f32
  } : memref<8x64xf32>, memref<8x64xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @epilogue_yield_type(%p: memref<8x64xf32>, %y: memref<8x64xf32>) {
  symm_mem.all_reduce_epilogue_out sum %p into %y group @tp algorithm one_shot {
  ^bb0(%r: f32):
    %h = arith.truncf %r : f32 to f16
    // expected-error@+1 {{yields 'f16', but out holds 'f32'}}
    symm_mem.epilogue_yield %h : f16
  } : memref<8x64xf32>, memref<8x64xf32>
  return
}

// -----

// expected-error@+1 {{'symm_mem.max_tokens' is a positive integer (the largest token count the function takes), got 0 : i64}}
func.func @no_tokens(%x: memref<?x4xf32>) attributes {symm_mem.max_tokens = 0 : i64} {
  return
}

// -----

// expected-error@+1 {{'symm_mem.max_tokens' is only valid on functions}}
symm_mem.group @tp world_size(2) {symm_mem.max_tokens = 8 : i64}

// -----

// An epilogue operand of dynamic leading size matches out's (the token
// count, one per call); any other dynamic size does not.
symm_mem.group @tp world_size(2)
func.func @epilogue_dynamic_columns(%p: memref<8x?xf32>, %r: memref<8x?xf32>, %y: memref<8x?xf32>) {
  // expected-error@+1 {{epilogue operand #0 is 8x?, but it must have out's shape (8x?) or be 1-D with out's}}
  symm_mem.all_reduce_epilogue_out sum %p epilogue(%r : memref<8x?xf32>) into %y group @tp algorithm auto {
  ^bb0(%s: f32, %v: f32):
    %t = arith.addf %s, %v : f32
    symm_mem.epilogue_yield %t : f32
  } : memref<8x?xf32>, memref<8x?xf32>
  return
}

// -----

// An all-reduce of nothing is refused where it is written.
symm_mem.group @tp world_size(2)
func.func @zero_elements(%a: memref<0x4xf32>, %b: memref<0x4xf32>) {
  // expected-error@+1 {{reduces no elements ('memref<0x4xf32>'): there is nothing to exchange; remove the collective}}
  symm_mem.all_reduce_out sum %a into %b group @tp : memref<0x4xf32>, memref<0x4xf32>
  return
}

// -----

// expected-error@+1 {{'symm_mem.group' op group name "" must be letters, digits, '_', '$', '.' or '-', and not empty}}
symm_mem.group @"" world_size(2)

// -----

// expected-error@+1 {{'symm_mem.group' op group name "a b" must be letters, digits}}
symm_mem.group @"a b" world_size(2)

// -----

symm_mem.group @tp world_size(2)
func.func @rows_step_not_a_sum(%p: memref<8x64xf32>, %h: memref<8x64xf32>, %n: memref<8x64xf32>) {
  // expected-error@+1 {{step must yield arith.addf(x, acc) with acc, its second argument, read only there}}
  symm_mem.all_reduce_rows_out sum %p into %h rows into %n init 0.0 group @tp algorithm auto {
  ^bb0(%r: f32):
    symm_mem.epilogue_yield %r : f32
  } step {
  ^bb0(%e: f32, %acc: f32):
    %m = arith.maximumf %e, %acc : f32
    symm_mem.epilogue_yield %m : f32
  } apply {
  ^bb0(%e: f32, %total: f32):
    %y = arith.divf %e, %total : f32
    symm_mem.epilogue_yield %y : f32
  } : memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @rows_apply_arguments(%p: memref<8x64xf32>, %g: memref<64xf32>, %h: memref<8x64xf32>, %n: memref<8x64xf32>) {
  // expected-error@+1 {{apply region takes 2 arguments, but needs 3 (out's element, the row total, row operand #0)}}
  symm_mem.all_reduce_rows_out sum %p into %h rows(%g : memref<64xf32>) into %n init 0.0 group @tp algorithm auto {
  ^bb0(%r: f32):
    symm_mem.epilogue_yield %r : f32
  } step {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %e, %acc : f32
    symm_mem.epilogue_yield %s : f32
  } apply {
  ^bb0(%e: f32, %total: f32):
    %y = arith.divf %e, %total : f32
    symm_mem.epilogue_yield %y : f32
  } : memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @rows_out_shape(%p: memref<8x64xf32>, %h: memref<8x64xf32>, %n: memref<4x64xf32>) {
  // expected-error@+1 {{rows_out is 4x64, but it must have out's shape (8x64)}}
  symm_mem.all_reduce_rows_out sum %p into %h rows into %n init 0.0 group @tp algorithm auto {
  ^bb0(%r: f32):
    symm_mem.epilogue_yield %r : f32
  } step {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %e, %acc : f32
    symm_mem.epilogue_yield %s : f32
  } apply {
  ^bb0(%e: f32, %total: f32):
    symm_mem.epilogue_yield %e : f32
  } : memref<8x64xf32>, memref<8x64xf32>, memref<4x64xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @rows_dynamic_length(%p: memref<8x?xf32>, %h: memref<8x?xf32>, %n: memref<8x?xf32>) {
  // expected-error@+1 {{reduces rows of a 2-D memref with a static row length, but out is 8x?}}
  symm_mem.all_reduce_rows_out sum %p into %h rows into %n init 0.0 group @tp algorithm auto {
  ^bb0(%r: f32):
    symm_mem.epilogue_yield %r : f32
  } step {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %e, %acc : f32
    symm_mem.epilogue_yield %s : f32
  } apply {
  ^bb0(%e: f32, %total: f32):
    symm_mem.epilogue_yield %e : f32
  } : memref<8x?xf32>, memref<8x?xf32>, memref<8x?xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @rows_step_yield_type(%p: memref<8x64xf32>, %h: memref<8x64xf32>, %n: memref<8x64xf32>) {
  symm_mem.all_reduce_rows_out sum %p into %h rows into %n init 0.0 group @tp algorithm auto {
  ^bb0(%r: f32):
    symm_mem.epilogue_yield %r : f32
  } step {
  ^bb0(%e: f32, %acc: f32):
    %s = arith.addf %e, %acc : f32
    %t = arith.truncf %s : f32 to f16
    // expected-error@+1 {{yields 'f16', but the accumulator holds 'f32'}}
    symm_mem.epilogue_yield %t : f16
  } apply {
  ^bb0(%e: f32, %total: f32):
    symm_mem.epilogue_yield %e : f32
  } : memref<8x64xf32>, memref<8x64xf32>, memref<8x64xf32>
  return
}

// -----

// The Lamport sentinel is a 16-bit float's -0.0: no f32.
gpu.module @device_ops {
  gpu.func @lamport_f32(%pool: !symm_mem.pool, %at: !llvm.ptr) kernel {
    // expected-error@+1 {{'symm_mem.lamport_wait' op result #0 must be bfloat16 type or 16-bit float or vector of bfloat16 type or 16-bit float values of ranks 1, but got 'vector<4xf32>'}}
    %v = symm_mem.lamport_wait %pool, %at : vector<4xf32>
    gpu.return
  }
}

// -----

func.func @lamport_on_host(%pool: !symm_mem.pool, %at: !llvm.ptr) {
  // expected-error@+1 {{'symm_mem.lamport_wait' op is a device op}}
  %v = symm_mem.lamport_wait %pool, %at : vector<8xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @split_k_slices(%p: memref<16x64xbf16>, %a: memref<16x96xbf16>, %w: memref<96x64xbf16>,
                          %q: memref<5x16x64xf32>, %y: memref<16x64xbf16>) {
  // expected-error@+1 {{partials must be S x rows x 64 with a static S >= 2 that divides K = 96, got 5x16x64}}
  symm_mem.all_reduce_epilogue_out sum %p matmul(%a, %w : memref<16x96xbf16>, memref<96x64xbf16>) split_k(%q : memref<5x16x64xf32>) up to 128 rows into %y group @tp algorithm auto {
  ^bb0(%r: bf16):
    symm_mem.epilogue_yield %r : bf16
  } : memref<16x64xbf16>, memref<16x64xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @split_k_shapes(%p: memref<16x64xbf16>, %a: memref<16x96xbf16>, %w: memref<128x64xbf16>,
                          %q: memref<2x16x64xf32>, %y: memref<16x64xbf16>) {
  // expected-error@+1 {{matmul shapes do not match: lhs 16x96 @ rhs 128x64 cannot give input 16x64}}
  symm_mem.all_reduce_epilogue_out sum %p matmul(%a, %w : memref<16x96xbf16>, memref<128x64xbf16>) split_k(%q : memref<2x16x64xf32>) up to 128 rows into %y group @tp algorithm auto {
  ^bb0(%r: bf16):
    symm_mem.epilogue_yield %r : bf16
  } : memref<16x64xbf16>, memref<16x64xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @split_k_element(%p: memref<16x64xbf16>, %a: memref<16x96xf16>, %w: memref<96x64xbf16>,
                           %q: memref<2x16x64xf32>, %y: memref<16x64xbf16>) {
  // expected-error@+1 {{element types do not match: lhs has 'f16' but input has 'bf16'}}
  symm_mem.all_reduce_epilogue_out sum %p matmul(%a, %w : memref<16x96xf16>, memref<96x64xbf16>) split_k(%q : memref<2x16x64xf32>) up to 128 rows into %y group @tp algorithm auto {
  ^bb0(%r: bf16):
    symm_mem.epilogue_yield %r : bf16
  } : memref<16x64xbf16>, memref<16x64xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @split_k_incomplete(%p: memref<16x64xbf16>, %a: memref<16x96xbf16>, %w: memref<96x64xbf16>,
                              %y: memref<16x64xbf16>) {
  // expected-error@+1 {{a matmul prologue needs lhs, rhs, partials and split_k_max_rows together}}
  "symm_mem.all_reduce_epilogue_out"(%p, %a, %w, %y) <{algorithm = 0 : i32, group = @tp, operandSegmentSizes = array<i32: 1, 1, 1, 0, 0, 1>, reduction = 0 : i32}> ({
  ^bb0(%r: bf16):
    symm_mem.epilogue_yield %r : bf16
  }) : (memref<16x64xbf16>, memref<16x96xbf16>, memref<96x64xbf16>, memref<16x64xbf16>) -> ()
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @split_k_rows(%p: memref<16x64xbf16>, %a: memref<16x96xbf16>, %w: memref<96x64xbf16>,
                        %q: memref<2x16x64xf32>, %y: memref<16x64xbf16>) {
  // expected-error@+1 {{split_k_max_rows must be at least 1}}
  symm_mem.all_reduce_epilogue_out sum %p matmul(%a, %w : memref<16x96xbf16>, memref<96x64xbf16>) split_k(%q : memref<2x16x64xf32>) up to 0 rows into %y group @tp algorithm auto {
  ^bb0(%r: bf16):
    symm_mem.epilogue_yield %r : bf16
  } : memref<16x64xbf16>, memref<16x64xbf16>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @rows_split_k_shapes(%p: memref<16x64xbf16>, %a: memref<16x96xbf16>, %w: memref<96x32xbf16>,
                               %q: memref<2x16x64xf32>, %h: memref<16x64xbf16>, %n: memref<16x64xbf16>) {
  // expected-error@+1 {{'symm_mem.all_reduce_rows_out' op matmul shapes do not match: lhs 16x96 @ rhs 96x32 cannot give input 16x64}}
  symm_mem.all_reduce_rows_out sum %p matmul(%a, %w : memref<16x96xbf16>, memref<96x32xbf16>) split_k(%q : memref<2x16x64xf32>) up to 16 rows into %h rows into %n init 0.0 group @tp algorithm auto {
  ^bb0(%r: bf16):
    symm_mem.epilogue_yield %r : bf16
  } step {
  ^bb0(%e: bf16, %acc: f32):
    %f = arith.extf %e : bf16 to f32
    %t = arith.addf %f, %acc : f32
    symm_mem.epilogue_yield %t : f32
  } apply {
  ^bb0(%e: bf16, %total: f32):
    symm_mem.epilogue_yield %e : bf16
  } : memref<16x64xbf16>, memref<16x64xbf16>, memref<16x64xbf16>
  return
}

// -----

// Collectives run on the host, once per call on every rank, in order: not
// in a parallel loop, whose iterations may run concurrently.
symm_mem.group @tp world_size(2)
func.func @in_parallel_loop(%x: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    // expected-error@+1 {{'symm_mem.all_reduce' op is a collective, which every rank runs once per call, in order: it may sit in a function body and in sequential control flow (scf.for, scf.while, scf.if, scf.execute_region, scf.index_switch), not inside 'scf.parallel'}}
    %v = symm_mem.all_reduce sum %x group @tp : memref<64xf32> -> memref<64xf32>
    scf.reduce
  }
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @in_affine_parallel(%x: memref<64xf32>, %out: memref<64xf32>) {
  affine.parallel (%i) = (0) to (4) {
    // expected-error@+1 {{not inside 'affine.parallel'}}
    symm_mem.all_reduce_out sum %x into %out group @tp : memref<64xf32>, memref<64xf32>
  }
  return
}

// -----

// Nor in a linalg body, which runs per element.
symm_mem.group @tp world_size(2)
#id = affine_map<(d0) -> (d0)>
func.func @in_linalg_body(%x: memref<64xf32>, %out: memref<64xf32>, %buf: memref<8xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%out : memref<64xf32>) {
  ^bb0(%a: f32, %b: f32):
    // expected-error@+1 {{not inside 'linalg.generic'}}
    symm_mem.all_reduce_out sum %buf into %buf group @tp : memref<8xf32>, memref<8xf32>
    linalg.yield %a : f32
  }
  return
}

// -----

// Nor in GPU code.
symm_mem.group @tp world_size(2)
func.func @in_gpu_launch(%a: memref<64x128xbf16, #symm_mem.allocator<symmetric, @tp>>, %b: memref<128x256xbf16>, %c: memref<128x256xbf16>) {
  %c1 = arith.constant 1 : index
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    // expected-error@+1 {{'symm_mem.all_gather_matmul_out' op is a collective, which runs on the host: it cannot sit in GPU code ('gpu.launch')}}
    symm_mem.all_gather_matmul_out %a, %b into %c group @tp : memref<64x128xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<128x256xbf16>, memref<128x256xbf16>
    gpu.terminator
  }
  return
}

// -----

// affine.for bodies are lowered after the host's control flow: not yet a
// place for a collective.
symm_mem.group @tp world_size(2)
func.func @in_affine_for(%x: memref<64xf32>, %out: memref<64xf32>) {
  affine.for %i = 0 to 4 {
    // expected-error@+1 {{not inside 'affine.for'}}
    symm_mem.all_reduce_out sum %x into %out group @tp : memref<64xf32>, memref<64xf32>
  }
  return
}

// -----

// An element count whose bytes do not fit in 64 bits (it used to wrap to
// "reduces no elements").
symm_mem.group @tp world_size(2)
func.func @too_many_bytes(%a: memref<4611686018427387904x4xf32>, %b: memref<4611686018427387904x4xf32>) {
  // expected-error@+1 {{reduces more bytes than 64 bits count}}
  symm_mem.all_reduce_out sum %a into %b group @tp : memref<4611686018427387904x4xf32>, memref<4611686018427387904x4xf32>
  return
}

// -----

// A TMA box has at most 256 rows.
func.func @tensor_map_rows(%w: memref<4096x7168xbf16>) -> i64 {
  // expected-error@+1 {{box of 512 rows: a TMA box has 1 to 256 rows}}
  %d = symm_mem.tensor_map %w box(512 x 64) : memref<4096x7168xbf16>
  return %d : i64
}

// -----

// With the 128-byte swizzle a box row is whole 16-byte pieces, at most 128
// bytes.
func.func @tensor_map_columns(%w: memref<4096x7168xbf16>) -> i64 {
  // expected-error@+1 {{box of 96 columns: with the 128-byte swizzle a box row is 8 to 64 bf16 elements, a multiple of 8}}
  %d = symm_mem.tensor_map %w box(64 x 96) : memref<4096x7168xbf16>
  return %d : i64
}

// -----

// The descriptor reads whole rows: a column view's rows are not contiguous.
func.func @tensor_map_strided(%w: memref<4096x64xbf16, strided<[7168, 2]>>) -> i64 {
  // expected-error@+1 {{must have contiguous rows (unit inner stride)}}
  %d = symm_mem.tensor_map %w box(64 x 64) : memref<4096x64xbf16, strided<[7168, 2]>>
  return %d : i64
}

// -----

// Only bf16 matrices (or stacks of them).
func.func @tensor_map_f32(%w: memref<4096x7168xf32>) -> i64 {
  // expected-error@+1 {{operand #0 must be}}
  %d = symm_mem.tensor_map %w box(64 x 64) : memref<4096x7168xf32>
  return %d : i64
}
