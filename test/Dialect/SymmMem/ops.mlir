// Round trip of every symm_mem op, in custom syntax and through the generic
// form.
// RUN: symm-opt %s | symm-opt | FileCheck %s
// RUN: symm-opt %s --mlir-print-op-generic | symm-opt | FileCheck %s

// CHECK: #[[$TP:.*]] = #symm_mem.allocator<symmetric, @tp>

// CHECK: symm_mem.group @tp world_size(2)
symm_mem.group @tp world_size(2)
// CHECK: symm_mem.group @dp{{$}}
symm_mem.group @dp

// CHECK: symm_mem.global @pool alignment(128) : memref<192xi8, #[[$TP]]>
symm_mem.global @pool alignment(128) : memref<192xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: symm_mem.global @input_copy : memref<4x4xf32, #[[$TP]]>
symm_mem.global @input_copy : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>

// CHECK-LABEL: func.func @groups
func.func @groups() -> (index, index) {
  // CHECK: %[[R:.*]] = symm_mem.rank @tp
  %r = symm_mem.rank @tp
  // CHECK: %[[W:.*]] = symm_mem.world_size @dp
  %w = symm_mem.world_size @dp
  // CHECK: return %[[R]], %[[W]] : index, index
  return %r, %w : index, index
}

// CHECK-LABEL: func.func @allocation
// CHECK-SAME: (%[[N:.*]]: index)
func.func @allocation(%n: index) {
  // CHECK: %[[P:.*]] = symm_mem.get_global @pool : memref<192xi8, #[[$TP]]>
  %pool = symm_mem.get_global @pool : memref<192xi8, #symm_mem.allocator<symmetric, @tp>>
  // Pool sub-allocation is upstream memref.view at a byte offset.
  // CHECK: memref.view %[[P]][%{{.*}}][] : memref<192xi8, #[[$TP]]> to memref<4x4xf32, #[[$TP]]>
  %c64 = arith.constant 64 : index
  %v = memref.view %pool[%c64][] : memref<192xi8, #symm_mem.allocator<symmetric, @tp>> to memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>
  // CHECK: %[[B:.*]] = symm_mem.alloc(%[[N]]) : memref<?x8xbf16, #[[$TP]]>
  %b = symm_mem.alloc(%n) : memref<?x8xbf16, #symm_mem.allocator<symmetric, @tp>>
  // CHECK: %[[S:.*]] = symm_mem.alloc() : memref<16xf16, #[[$TP]]>
  %s = symm_mem.alloc() : memref<16xf16, #symm_mem.allocator<symmetric, @tp>>
  // CHECK: symm_mem.dealloc %[[B]] : memref<?x8xbf16, #[[$TP]]>
  symm_mem.dealloc %b : memref<?x8xbf16, #symm_mem.allocator<symmetric, @tp>>
  // CHECK: symm_mem.dealloc %[[S]] : memref<16xf16, #[[$TP]]>
  symm_mem.dealloc %s : memref<16xf16, #symm_mem.allocator<symmetric, @tp>>
  return
}

// CHECK-LABEL: func.func @with_allocator
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>)
func.func @with_allocator(%x: memref<16xf32>) -> memref<16xf32, #symm_mem.allocator<symmetric, @tp>> {
  // CHECK: %[[W:.*]] = symm_mem.with_allocator #[[$TP]] -> memref<16xf32, #[[$TP]]> {
  // CHECK:   %[[C:.*]] = func.call @make(%[[X]]) : (memref<16xf32>) -> memref<16xf32>
  // CHECK:   symm_mem.yield %[[C]] : memref<16xf32>
  // CHECK: }
  %w = symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp> -> memref<16xf32, #symm_mem.allocator<symmetric, @tp>> {
    %c = func.call @make(%x) : (memref<16xf32>) -> memref<16xf32>
    symm_mem.yield %c : memref<16xf32>
  }
  // CHECK: symm_mem.with_allocator #[[$TP]] {
  // CHECK:   symm_mem.yield{{$}}
  symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp> {
    symm_mem.yield
  }
  return %w : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
}
func.func private @make(memref<16xf32>) -> memref<16xf32> attributes {symm_mem.allocates_symmetric}

// CHECK-LABEL: func.func @all_reduce_functional
// CHECK-SAME: (%[[X:.*]]: memref<4x4xf32, #[[$TP]]>, %[[H:.*]]: memref<8xf16>)
func.func @all_reduce_functional(%x: memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>, %h: memref<8xf16>) {
  // CHECK: symm_mem.all_reduce sum %[[X]] group @tp : memref<4x4xf32, #[[$TP]]> -> memref<4x4xf32>
  %0 = symm_mem.all_reduce sum %x group @tp : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<4x4xf32>
  // CHECK: symm_mem.all_reduce max %[[X]] group @tp algorithm one_shot : memref<4x4xf32, #[[$TP]]> -> memref<4x4xf32>
  %1 = symm_mem.all_reduce max %x group @tp algorithm one_shot : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<4x4xf32>
  // Before symm-mem-realize, the input may still be in the default memory
  // space.
  // CHECK: symm_mem.all_reduce min %[[H]] group @dp algorithm two_shot : memref<8xf16> -> memref<8xf16>
  %2 = symm_mem.all_reduce min %h group @dp algorithm two_shot : memref<8xf16> -> memref<8xf16>
  return
}

// CHECK-LABEL: func.func @all_reduce_out
// CHECK-SAME: (%[[X:.*]]: memref<1024xbf16, #[[$TP]]>, %[[Y:.*]]: memref<1024xbf16>, %[[D:.*]]: memref<?xf32>, %[[E:.*]]: memref<?xf32>)
func.func @all_reduce_out(%x: memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>, %y: memref<1024xbf16>, %d: memref<?xf32>, %e: memref<?xf32>) {
  // CHECK: symm_mem.all_reduce_out sum %[[X]] into %[[Y]] group @tp : memref<1024xbf16, #[[$TP]]>, memref<1024xbf16>
  symm_mem.all_reduce_out sum %x into %y group @tp : memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<1024xbf16>
  // In place: the output may be the input.
  // CHECK: symm_mem.all_reduce_out sum %[[X]] into %[[X]] group @tp algorithm one_shot
  symm_mem.all_reduce_out sum %x into %x group @tp algorithm one_shot : memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>
  // CHECK: symm_mem.all_reduce_out max %[[D]] into %[[E]] group @tp algorithm two_shot : memref<?xf32>, memref<?xf32>
  symm_mem.all_reduce_out max %d into %e group @tp algorithm two_shot : memref<?xf32>, memref<?xf32>
  return
}

// CHECK-LABEL: func.func @all_gather_matmul
// CHECK-SAME: (%[[A:.*]]: memref<64x128xbf16, #[[$TP]]>, %[[B:.*]]: memref<128x256xbf16>, %[[C:.*]]: memref<128x256xbf16>)
func.func @all_gather_matmul(%a: memref<64x128xbf16, #symm_mem.allocator<symmetric, @tp>>, %b: memref<128x256xbf16>, %c: memref<128x256xbf16>) {
  // CHECK: symm_mem.all_gather_matmul %[[A]], %[[B]] group @tp : memref<64x128xbf16, #[[$TP]]>, memref<128x256xbf16> -> memref<128x256xbf16>
  %0 = symm_mem.all_gather_matmul %a, %b group @tp : memref<64x128xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<128x256xbf16> -> memref<128x256xbf16>
  // CHECK: symm_mem.all_gather_matmul_out %[[A]], %[[B]] into %[[C]] group @tp : memref<64x128xbf16, #[[$TP]]>, memref<128x256xbf16>, memref<128x256xbf16>
  symm_mem.all_gather_matmul_out %a, %b into %c group @tp : memref<64x128xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<128x256xbf16>, memref<128x256xbf16>
  return
}

// A group without a static world size accepts any multiple of the shard.
// CHECK-LABEL: func.func @all_gather_matmul_dynamic
func.func @all_gather_matmul_dynamic(%a: memref<?x16xf32>, %b: memref<16x32xf32>) -> memref<?x32xf32> {
  // CHECK: symm_mem.all_gather_matmul %{{.*}}, %{{.*}} group @dp : memref<?x16xf32>, memref<16x32xf32> -> memref<?x32xf32>
  %0 = symm_mem.all_gather_matmul %a, %b group @dp : memref<?x16xf32>, memref<16x32xf32> -> memref<?x32xf32>
  return %0 : memref<?x32xf32>
}

// CHECK-LABEL: func.func @pool_of
// CHECK-SAME: (%[[BUF:.*]]: memref<1024xbf16, #[[$TP]]>)
func.func @pool_of(%buf: memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>) -> !symm_mem.pool {
  // CHECK: %[[P:.*]] = symm_mem.pool_of %[[BUF]] : memref<1024xbf16, #[[$TP]]>
  %p = symm_mem.pool_of %buf : memref<1024xbf16, #symm_mem.allocator<symmetric, @tp>>
  // CHECK: return %[[P]] : !symm_mem.pool
  return %p : !symm_mem.pool
}

// The fused all-reduces with a split-K matmul prologue.
// CHECK-LABEL: func.func @fused_with_prologue
// CHECK-SAME: (%[[P:.*]]: memref<?x64xbf16>, %[[A:.*]]: memref<?x96xbf16>, %[[W:.*]]: memref<96x64xbf16>, %[[Q:.*]]: memref<2x?x64xf32>, %[[X:.*]]: memref<?x64xbf16>, %[[H:.*]]: memref<?x64xbf16>, %[[G:.*]]: memref<64xbf16>, %[[N:.*]]: memref<?x64xbf16>)
func.func @fused_with_prologue(%p: memref<?x64xbf16>, %a: memref<?x96xbf16>, %w: memref<96x64xbf16>,
                               %q: memref<2x?x64xf32>, %x: memref<?x64xbf16>, %h: memref<?x64xbf16>,
                               %g: memref<64xbf16>, %n: memref<?x64xbf16>) {
  // CHECK: symm_mem.all_reduce_epilogue_out sum %[[P]] matmul(%[[A]], %[[W]] : memref<?x96xbf16>, memref<96x64xbf16>) split_k(%[[Q]] : memref<2x?x64xf32>) up to 16 rows epilogue(%[[X]] : memref<?x64xbf16>) into %[[H]] group @tp algorithm auto
  symm_mem.all_reduce_epilogue_out sum %p matmul(%a, %w : memref<?x96xbf16>, memref<96x64xbf16>) split_k(%q : memref<2x?x64xf32>) up to 16 rows epilogue(%x : memref<?x64xbf16>) into %h group @tp algorithm auto {
  ^bb0(%r: bf16, %v: bf16):
    %s = arith.addf %r, %v : bf16
    symm_mem.epilogue_yield %s : bf16
  } : memref<?x64xbf16>, memref<?x64xbf16>
  // CHECK: symm_mem.all_reduce_rows_out sum %[[P]] matmul(%[[A]], %[[W]] : memref<?x96xbf16>, memref<96x64xbf16>) split_k(%[[Q]] : memref<2x?x64xf32>) up to 16 rows epilogue(%[[X]] : memref<?x64xbf16>) into %[[H]] rows(%[[G]] : memref<64xbf16>) into %[[N]] init 0.000000e+00 group @tp algorithm auto
  // CHECK: } step {
  // CHECK: } apply {
  symm_mem.all_reduce_rows_out sum %p matmul(%a, %w : memref<?x96xbf16>, memref<96x64xbf16>) split_k(%q : memref<2x?x64xf32>) up to 16 rows epilogue(%x : memref<?x64xbf16>) into %h rows(%g : memref<64xbf16>) into %n init 0.0 group @tp algorithm auto {
  ^bb0(%r: bf16, %v: bf16):
    %s = arith.addf %r, %v : bf16
    symm_mem.epilogue_yield %s : bf16
  } step {
  ^bb0(%e: bf16, %acc: f32):
    %f = arith.extf %e : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %t = arith.addf %sq, %acc : f32
    symm_mem.epilogue_yield %t : f32
  } apply {
  ^bb0(%e: bf16, %total: f32, %gv: bf16):
    %y = arith.mulf %e, %gv : bf16
    symm_mem.epilogue_yield %y : bf16
  } : memref<?x64xbf16>, memref<?x64xbf16>, memref<?x64xbf16>
  return
}

// CHECK-LABEL: gpu.module @device_ops
gpu.module @device_ops {
  // CHECK-LABEL: gpu.func @every_op
  // CHECK-SAME: (%[[POOL:.*]]: !symm_mem.pool, %[[BUF:.*]]: memref<?xbf16>, %[[PTR:.*]]: !llvm.ptr, %[[PEER:.*]]: index, %[[CH:.*]]: index, %[[N:.*]]: i32)
  gpu.func @every_op(%pool: !symm_mem.pool, %buf: memref<?xbf16>, %ptr: !llvm.ptr, %peer: index, %ch: index, %n: i32) kernel {
    // CHECK: symm_mem.pool_rank %[[POOL]]
    %rank = symm_mem.pool_rank %pool
    // CHECK: symm_mem.pool_world_size %[[POOL]]
    %world = symm_mem.pool_world_size %pool
    // CHECK: symm_mem.peer_ptr %[[POOL]][%[[PEER]]], %[[PTR]] : !llvm.ptr
    %theirs = symm_mem.peer_ptr %pool[%peer], %ptr : !llvm.ptr
    // CHECK: symm_mem.peer_view %[[BUF]][%[[PEER]]] in %[[POOL]] : memref<?xbf16>
    %view = symm_mem.peer_view %buf[%peer] in %pool : memref<?xbf16>
    // CHECK: symm_mem.staging_slot %[[POOL]][%[[PEER]]] slot %[[CH]]
    %slot = symm_mem.staging_slot %pool[%peer] slot %ch
    // CHECK: %[[REGION:.*]] = symm_mem.lamport_region %[[POOL]][%[[PEER]]] slot %[[CH]] from %[[PEER]]
    %region = symm_mem.lamport_region %pool[%peer] slot %ch from %peer
    // CHECK: symm_mem.lamport_wait %[[POOL]], %[[REGION]] : vector<8xbf16>
    %arrived = symm_mem.lamport_wait %pool, %region : vector<8xbf16>
    // CHECK: symm_mem.lamport_wait %[[POOL]], %[[REGION]] : f16
    %one = symm_mem.lamport_wait %pool, %region : f16
    // CHECK: symm_mem.put_signal %[[POOL]] to %[[PEER]] channel %[[CH]]
    symm_mem.put_signal %pool to %peer channel %ch
    // CHECK: symm_mem.wait_signal %[[POOL]] from %[[PEER]] channel %[[CH]]
    symm_mem.wait_signal %pool from %peer channel %ch
    // CHECK: symm_mem.barrier %[[POOL]] channel %[[CH]]
    symm_mem.barrier %pool channel %ch
    // CHECK: symm_mem.add_counter %[[POOL]] to %[[PEER]] channel %[[CH]]
    symm_mem.add_counter %pool to %peer channel %ch
    // CHECK: symm_mem.wait_counter %[[POOL]] from %[[PEER]] channel %[[CH]] reaches %[[N]]
    symm_mem.wait_counter %pool from %peer channel %ch reaches %n
    // CHECK: %[[E:.*]] = symm_mem.epoch %[[POOL]] channel %[[CH]]
    %e = symm_mem.epoch %pool channel %ch
    // CHECK: symm_mem.set_epoch %[[POOL]] channel %[[CH]] to %[[E]]
    symm_mem.set_epoch %pool channel %ch to %e
    gpu.return
  }
}

// A TMA descriptor of a weight (the TMA GEMV's), of a matrix and of a
// stack of split-K slices.
// CHECK-LABEL: func.func @tensor_maps
// CHECK-SAME: (%[[W:[^:]*]]: memref<4096x7168xbf16>, %[[S:[^:]*]]: memref<2x3584x4096xbf16>)
func.func @tensor_maps(%w: memref<4096x7168xbf16>, %slices: memref<2x3584x4096xbf16>) -> (i64, i64) {
  // CHECK: %[[D:.*]] = symm_mem.tensor_map %[[W]] box(64 x 64) : memref<4096x7168xbf16>
  %d = symm_mem.tensor_map %w box(64 x 64) : memref<4096x7168xbf16>
  // CHECK: symm_mem.tensor_map %[[S]] box(128 x 64) : memref<2x3584x4096xbf16>
  %s = symm_mem.tensor_map %slices box(128 x 64) : memref<2x3584x4096xbf16>
  return %d, %s : i64, i64
}
