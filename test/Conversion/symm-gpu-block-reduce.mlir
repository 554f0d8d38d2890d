// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-gpu-block-reduce)' | FileCheck %s

// Every gpu.all_reduce becomes an XOR butterfly over each warp, then (with
// more than one warp) lane 0 of each warp stores its value in a shared
// array of the reduction's own, the block meets once, and every warp reads
// the warps' values and runs the butterfly over them: each thread computes
// the result itself, and no thread stores one that another reads (upstream
// has every thread of the first warp store its own, different partial sum
// into one word when the warps are not a power of two).

// CHECK-LABEL: gpu.module @kernels
// One shared array per reduction of more than one warp, 32 elements of
// its type, numbered in the reductions' order.
// CHECK-NEXT: llvm.mlir.global internal @[[$B512:symm_block_reduce_0]]() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x f32>
// CHECK-NEXT: llvm.mlir.global internal @[[$B288:symm_block_reduce_1]]() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x f32>
// CHECK-NEXT: llvm.mlir.global internal @[[$B128:symm_block_reduce_2]]() {addr_space = 3 : i32, alignment = 16 : i64} : !llvm.array<32 x f64>

// 16 warps: the warp's butterfly by 16, 8, 4, 2, 1 over the whole warp ...
// CHECK-LABEL: gpu.func @sum512(
// CHECK-SAME: %[[P:.*]]: memref<1xf32>, %[[X:.*]]: f32)
// CHECK-NOT: gpu.all_reduce
// CHECK: %[[W32:.*]] = arith.constant 32 : i32
// CHECK: %[[S16:.*]], %{{.*}} = gpu.shuffle xor %[[X]], %{{.*}}, %[[W32]] : f32
// CHECK: %[[A16:.*]] = arith.addf %[[X]], %[[S16]] : f32
// CHECK: gpu.shuffle xor %[[A16]]
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle xor %[[A2:[0-9]+]], %{{.*}}, %[[W32]] : f32
// CHECK: %[[WARP_SUM:.*]] = arith.addf %[[A2]], %[[S1]] : f32
// ... lane 0 stores it at its warp's slot ...
// CHECK: %[[T:.*]] = gpu.thread_id x
// CHECK: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK: %[[LANE:.*]] = arith.andi %[[T32]], %{{.*}} : i32
// CHECK: %[[WARP:.*]] = arith.divui %[[T32]], %{{.*}} : i32
// CHECK: %[[BASE:.*]] = llvm.mlir.addressof @[[$B512]] : !llvm.ptr<3>
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %{{.*}} : i32
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[SLOT:.*]] = llvm.getelementptr %[[BASE]][%[[WARP]]]
// CHECK-NEXT: llvm.store %[[WARP_SUM]], %[[SLOT]]
// CHECK-NEXT: {{^ *}}}
// ... one barrier, then lane l reads warp l mod 16's value and the
// butterfly runs over 16 lanes (8, 4, 2, 1), in every warp.
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: %[[M15:.*]] = arith.constant 15 : i32
// CHECK-NEXT: %[[I:.*]] = arith.andi %[[LANE]], %[[M15]] : i32
// CHECK-NEXT: %[[AT:.*]] = llvm.getelementptr %[[BASE]][%[[I]]]
// CHECK-NEXT: %[[V:.*]] = llvm.load %[[AT]]
// CHECK: %[[C8:.*]] = arith.constant 8 : i32
// CHECK-NEXT: %[[R8:.*]], %{{.*}} = gpu.shuffle xor %[[V]], %[[C8]]
// CHECK-NEXT: %[[V8:.*]] = arith.addf %[[V]], %[[R8]] : f32
// CHECK: gpu.shuffle xor
// CHECK: gpu.shuffle xor
// CHECK: %[[R1:.*]], %{{.*}} = gpu.shuffle xor %[[V2:[0-9]+]], %{{.*}}
// CHECK-NEXT: %[[TOTAL:.*]] = arith.addf %[[V2]], %[[R1]] : f32
// No second store and no second barrier outside a loop.
// CHECK-NOT: gpu.barrier
// CHECK-NOT: llvm.store
// CHECK: memref.store %[[TOTAL]], %[[P]]
// CHECK-NEXT: gpu.return

// 9 warps (a 2064-wide row of bf16 vectors): lanes past the ninth read
// the last warp's slot and take maxnumf's identity, NaN, instead.
// CHECK-LABEL: gpu.func @max288(
// CHECK-COUNT-5: arith.maxnumf
// CHECK: llvm.mlir.addressof @[[$B288]]
// CHECK: gpu.barrier
// CHECK: %[[I:.*]] = arith.andi %{{.*}}, %{{.*}} : i32
// CHECK: %[[LAST:.*]] = arith.constant 8 : i32
// CHECK-NEXT: %[[CLAMPED:.*]] = arith.minui %[[I]], %[[LAST]] : i32
// CHECK-NEXT: %[[AT:.*]] = llvm.getelementptr %{{.*}}[%[[CLAMPED]]]
// CHECK-NEXT: %[[V:.*]] = llvm.load %[[AT]]
// CHECK-NEXT: %[[NINE:.*]] = arith.constant 9 : i32
// CHECK-NEXT: %[[INSIDE:.*]] = arith.cmpi ult, %[[I]], %[[NINE]] : i32
// CHECK-NEXT: %[[NAN:.*]] = arith.constant 0x7FC00000 : f32
// CHECK-NEXT: %[[PADDED:.*]] = arith.select %[[INSIDE]], %[[V]], %[[NAN]] : f32
// CHECK: gpu.shuffle xor %[[PADDED]], %{{.*}}
// CHECK-COUNT-4: arith.maxnumf
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// One warp: the butterfly is the result; no shared memory, no barrier.
// CHECK-LABEL: gpu.func @warp(
// CHECK-COUNT-5: gpu.shuffle xor
// CHECK-NOT: llvm.mlir.addressof
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// Two-dimensional blocks: the thread's index is x + 64 y (4 warps, f64);
// in a loop the block meets again after the reads, before the next
// iteration's stores.
// CHECK-LABEL: gpu.func @looped(
// CHECK: scf.for
// CHECK-COUNT-5: arith.minimumf %{{.*}} : f64
// CHECK: %[[TX:.*]] = gpu.thread_id x
// CHECK: %[[X32:.*]] = arith.index_cast %[[TX]] : index to i32
// CHECK: %[[TY:.*]] = gpu.thread_id y
// CHECK: %[[Y32:.*]] = arith.index_cast %[[TY]] : index to i32
// CHECK: %[[C64:.*]] = arith.constant 64 : i32
// CHECK: %[[ROW:.*]] = arith.muli %[[Y32]], %[[C64]] : i32
// CHECK: arith.addi %[[X32]], %[[ROW]] : i32
// CHECK: llvm.mlir.addressof @[[$B128]]
// CHECK: gpu.barrier
// CHECK-COUNT-2: arith.minimumf %{{.*}} : f64
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: memref.store
// Branches between blocks (which may loop back): the same second barrier
// (2 warps: one step over the exchanged values).
// CHECK-LABEL: gpu.func @branchy(
// CHECK: ^bb1:
// CHECK: gpu.barrier
// CHECK: gpu.shuffle xor
// CHECK-NEXT: arith.addf
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: arith.constant 0 : index
// CHECK-NEXT: memref.store
gpu.module @kernels {
  gpu.func @sum512(%p: memref<1xf32>, %x: f32) kernel attributes {known_block_size = array<i32: 512, 1, 1>} {
    %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
    %c0 = arith.constant 0 : index
    memref.store %s, %p[%c0] : memref<1xf32>
    gpu.return
  }
  gpu.func @max288(%p: memref<1xf32>, %x: f32) kernel attributes {nvvm.reqntid = array<i32: 288, 1, 1>} {
    %s = gpu.all_reduce maxnumf %x uniform {} : (f32) -> f32
    %c0 = arith.constant 0 : index
    memref.store %s, %p[%c0] : memref<1xf32>
    gpu.return
  }
  gpu.func @warp(%p: memref<1xf32>, %x: f32) kernel attributes {gpu.known_block_size = array<i32: 32, 1, 1>} {
    %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
    %c0 = arith.constant 0 : index
    memref.store %s, %p[%c0] : memref<1xf32>
    gpu.return
  }
  gpu.func @looped(%p: memref<?xf64>, %x: f64, %n: index) kernel attributes {known_block_size = array<i32: 64, 2, 1>} {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    scf.for %i = %c0 to %n step %c1 {
      %s = gpu.all_reduce minimumf %x uniform {} : (f64) -> f64
      memref.store %s, %p[%i] : memref<?xf64>
    }
    gpu.return
  }
  gpu.func @branchy(%p: memref<1xf32>, %x: f32, %again: i1) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
    cf.br ^bb1
  ^bb1:
    %s = gpu.all_reduce add %x uniform {} : (f32) -> f32
    %c0 = arith.constant 0 : index
    memref.store %s, %p[%c0] : memref<1xf32>
    cf.cond_br %again, ^bb1, ^bb2
  ^bb2:
    gpu.return
  }
}
