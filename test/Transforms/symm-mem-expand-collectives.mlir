// symm-mem-expand-collectives on each all-reduce algorithm: the op becomes
// launches of kernels built from the symm_mem device ops, taking the
// input's pool (symm_mem.pool_of); nothing calls the runtime yet.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-expand-collectives | FileCheck %s
// The compiler then inlines each epilogue into its kernel's loop:
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-mem-expand-collectives,gpu.module(inline))' 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=INLINED

// A staged one-shot (4 KiB fit the staging slots) on 2 ranks.
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: gpu.module @symm_kernels
// CHECK: gpu.func @symm_one_shot_staged_sum_f32_w2_v4(%[[KPOOL:.*]]: !symm_mem.pool,
// CHECK: symm_mem.epoch %[[KPOOL]]
// CHECK: symm_mem.add_counter %[[KPOOL]]
// CHECK: symm_mem.wait_counter %[[KPOOL]]
// CHECK: symm_mem.set_epoch %[[KPOOL]]
// CHECK-LABEL: func.func @one_shot
// CHECK-SAME: (%[[OUT:.*]]: memref<32x32xf32>)
// CHECK: %[[VIEW:.*]] = memref.view
// CHECK: %[[IN_AT:.*]] = memref.extract_aligned_pointer_as_index %[[VIEW]]
// CHECK: %[[POOL:.*]] = symm_mem.pool_of %[[VIEW]] : memref<32x32xf32, #{{.*}}>
// CHECK: %[[OUT_AT:.*]] = memref.extract_aligned_pointer_as_index %[[OUT]]
// CHECK: %[[NVEC:.*]] = arith.divui %{{.*}}, %{{.*}} : i64
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_staged_sum_f32_w2_v4 blocks in (%{{.*}}) threads in (%{{.*}}) args(%[[POOL]] : !symm_mem.pool, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %[[NVEC]] : i64)
// CHECK-NOT: symm_mem.all_reduce_out {{.*}} algorithm one_shot
// CHECK-NOT: call
func.func @one_shot(%out: memref<32x32xf32>) {
  %pool = symm_mem.get_global @pool : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>> to memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>, memref<32x32xf32>
  return
}

// -----

// bf16 sums up to 4 MiB take the Lamport one-shot: each thread stores
// its vectors (-0.0 lanes as +0.0) into its rank's region of every rank's
// Lamport area, in a first loop; in a second it waits for every rank's
// region of its own, puts the sentinel back, sums in rank order; the
// block's Lamport call counter (channel + 264) picks the parity. No
// barrier, no counter.
// With lamport-max-bytes=0 the same op takes the staged one-shot.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-expand-collectives='lamport-max-bytes=0' | FileCheck %s --check-prefix=NOLAMPORT
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<8192xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: gpu.func @symm_one_shot_lamport_sum_bf16_w2_v8(%[[KPOOL:[^:]*]]: !symm_mem.pool, %[[KIN:[^:]*]]: !llvm.ptr, %[[KOUT:[^:]*]]: !llvm.ptr
// CHECK-SAME: gpu.known_block_size = array<i32: 128, 1, 1>
// CHECK-SAME: nvvm.reqntid = array<i32: 128, 1, 1>
// CHECK-NOT: symm_mem.barrier
// CHECK: %[[RANK:.*]] = symm_mem.pool_rank %[[KPOOL]]
// CHECK: %[[COUNTER:.*]] = arith.addi %{{.*}}, %c264{{.*}} : index
// CHECK: %[[EPOCH:.*]] = symm_mem.epoch %[[KPOOL]] channel %[[COUNTER]]
// CHECK: %[[OUT0:.*]] = symm_mem.lamport_region %[[KPOOL]][%[[P0:.*]]] slot %[[PARITY:.*]] from %[[RANK]]
// CHECK: %[[OUT1:.*]] = symm_mem.lamport_region %[[KPOOL]][%[[P1:.*]]] slot %[[PARITY]] from %[[RANK]]
// CHECK: %[[IN0:.*]] = symm_mem.lamport_region %[[KPOOL]][%[[RANK]]] slot %[[PARITY]] from %[[P0]]
// CHECK: %[[IN1:.*]] = symm_mem.lamport_region %[[KPOOL]][%[[RANK]]] slot %[[PARITY]] from %[[P1]]
// CHECK: scf.for
// CHECK: %[[MINE:.*]] = llvm.load %{{.*}} : !llvm.ptr -> vector<8xbf16>
// CHECK: %[[NEG_ZERO:.*]] = arith.cmpi eq, %{{.*}}, %{{.*}} : vector<8xi16>
// CHECK: %[[SENT:.*]] = arith.select %[[NEG_ZERO]], %{{.*}}, %[[MINE]] : vector<8xi1>, vector<8xbf16>
// CHECK: llvm.store %[[SENT]]
// CHECK: llvm.store %[[SENT]]
// CHECK-NOT: symm_mem.lamport_wait
// CHECK: scf.for
// CHECK: %[[T0:.*]] = symm_mem.lamport_wait %[[KPOOL]], %{{.*}} : vector<8xbf16>
// CHECK: %[[T1:.*]] = symm_mem.lamport_wait %[[KPOOL]], %{{.*}} : vector<8xbf16>
// CHECK: %[[W0:.*]] = arith.extf %[[T0]]
// CHECK: %[[W1:.*]] = arith.extf %[[T1]]
// CHECK: arith.addf %[[W0]], %[[W1]]
// CHECK: gpu.barrier
// CHECK: symm_mem.set_epoch %[[KPOOL]] channel %[[COUNTER]]
// CHECK-LABEL: func.func @lamport
// CHECK: %[[POOL:.*]] = symm_mem.pool_of
// 512 vectors, one per thread of 128-thread blocks (LAMPORT_THREADS): 4 blocks.
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8 blocks in (%c4, %c1, %c1) threads in (%c128, %c1, %c1) args(%[[POOL]] : !symm_mem.pool,
// NOLAMPORT-LABEL: func.func @lamport
// NOLAMPORT: gpu.launch_func @symm_kernels::@symm_one_shot_staged_sum_bf16_w2_v8
func.func @lamport(%out: memref<8x512xbf16>) {
  %pool = symm_mem.get_global @pool : memref<8192xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<8192xi8, #symm_mem.allocator<symmetric, @tp>> to memref<8x512xbf16, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<8x512xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<8x512xbf16>
  return
}

// -----

// all_reduce_out with a dynamic token count: a byte-count dispatch between
// the kernels of each size segment, and the grid computed at run time.
symm_mem.group @tp world_size(2)
// CHECK: gpu.module @symm_kernels
// CHECK-DAG: gpu.func @symm_one_shot_lamport_sum_bf16_w2_v8(
// CHECK-DAG: gpu.func @symm_one_shot_sum_bf16_w2_v8(
// CHECK-LABEL: func.func @dynamic
// CHECK-SAME: (%[[IN:.*]]: memref<?x4096xbf16, #{{.*}}>, %[[OUT:.*]]: memref<?x4096xbf16>)
// CHECK: %[[POOL:.*]] = symm_mem.pool_of %[[IN]]
// CHECK: %[[ROWS:.*]] = memref.dim %[[IN]], %{{.*}}
// CHECK: %[[COUNT:.*]] = arith.muli
// CHECK: %[[BYTES:.*]] = arith.muli %[[COUNT]], %{{.*}} : i64
// Up to 4 MiB (512 rows) the Lamport kernel, on a vector per thread up
// to 264 blocks (LAMPORT_THREADS each), above that on 264, whose threads
// loop: on 2 ranks it takes the sums above the barrier one-shot's 1 MiB
// too, in place of the two-shot.
// CHECK: %[[LIMIT:.*]] = arith.constant 4194304 : i64
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %[[BYTES]], %[[LIMIT]] : i64
// CHECK: scf.if %[[FITS]] {
// CHECK: %[[LBLOCKS:.*]] = arith.divui %{{.*}}, %c128{{.*}} : i64
// CHECK: %[[AT_LEAST:.*]] = arith.maxui %[[LBLOCKS]], %{{.*}} : i64
// CHECK: %[[CAP:.*]] = arith.minui %[[AT_LEAST]], %c264{{.*}} : i64
// CHECK: %[[GRID:.*]] = arith.index_cast %[[CAP]] : i64 to index
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8 blocks in (%[[GRID]], %{{.*}}, %{{.*}}) threads in (%c128, %c1, %c1)
// CHECK: } else {
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_sum_bf16_w2_v8
func.func @dynamic(%in: memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, %out: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 2048 : i64} {
  // expected-remark@+1 {{all_reduce of up to 2048 rows of 8192 bytes on 2 ranks, a kernel per size}}
  symm_mem.all_reduce_out sum %in into %out group @tp : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<?x4096xbf16>
  return
}

// -----

// A fused epilogue: the region becomes a function of the kernel module
// that the kernel calls per element; the bias is passed as a pointer.
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: gpu.module @symm_kernels
// CHECK: func.func private @symm_epilogue_0(%[[X:.*]]: f32, %[[B:.*]]: f32) -> f32
// CHECK: %[[Y:.*]] = arith.addf %[[X]], %[[B]] : f32
// CHECK: return %[[Y]] : f32
// CHECK: gpu.func @symm_one_shot_staged_sum_f32_w2_v4_symm_epilogue_0(
// CHECK: func.call @symm_epilogue_0
// CHECK-LABEL: func.func @fused
// CHECK: %[[POOL:.*]] = symm_mem.pool_of
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_staged_sum_f32_w2_v4_symm_epilogue_0 {{.*}} args(%[[POOL]] : !symm_mem.pool, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64, %{{.*}} : !llvm.ptr)
// INLINED-NOT: func.func private @symm_epilogue_0
// INLINED: gpu.func @symm_one_shot_staged_sum_f32_w2_v4_symm_epilogue_0(
// INLINED: scf.for
// INLINED: %[[X:.*]] = llvm.extractelement %{{.*}}[%{{.*}} : i32] : vector<4xf32>
// INLINED-NEXT: %[[B:.*]] = llvm.extractelement %{{.*}}[%{{.*}} : i32] : vector<4xf32>
// INLINED-NEXT: arith.addf %[[X]], %[[B]] : f32
// INLINED-NOT: func.call
// INLINED: func.func @fused
func.func @fused(%bias: memref<32xf32>, %out: memref<32x32xf32>) {
  %pool = symm_mem.get_global @pool : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>> to memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_epilogue_out sum %in epilogue(%bias : memref<32xf32>) into %out group @tp algorithm one_shot {
  ^bb0(%x: f32, %b: f32):
    %y = arith.addf %x, %b : f32
    symm_mem.epilogue_yield %y : f32
  } : memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>, memref<32x32xf32>
  return
}

// -----

// A fused row statistic (RMSNorm after the residual add): the epilogue,
// step and apply regions become three functions; the kernel takes rows,
// rows_out, the row operand and the initial value, and a block reduces
// each row's partial sums (gpu.all_reduce) between the step and the apply.
// Its 4 rows of bf16 (32 KB) take the Lamport exchange: a block per row of
// 512 threads sends its vectors, then reduces the row as they arrive; the
// row statistic follows as in the staged kernel (lamport-max-bytes=0).
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<65536xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: gpu.module @symm_kernels
// CHECK-DAG: func.func private @symm_epilogue_0(%{{.*}}: bf16, %{{.*}}: bf16) -> bf16
// CHECK-DAG: func.func private @symm_epilogue_0_step(%{{.*}}: bf16, %{{.*}}: f32) -> f32
// CHECK-DAG: func.func private @symm_epilogue_0_apply(%{{.*}}: bf16, %{{.*}}: f32, %{{.*}}: bf16) -> bf16
// CHECK: gpu.func @symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply(%[[KPOOL:[^:]*]]: !symm_mem.pool, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[NROWS:.*]]: i64, %{{.*}}: !llvm.ptr, %[[NORMED:.*]]: !llvm.ptr, %[[GAMMA:.*]]: !llvm.ptr, %[[INITARG:.*]]: f32)
// CHECK-SAME: nvvm.reqntid = array<i32: 512, 1, 1>
// CHECK-NOT: symm_mem.wait_counter
// CHECK: symm_mem.lamport_region %[[KPOOL]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[NROWS]]
// CHECK: llvm.store
// CHECK: llvm.store
// CHECK: symm_mem.lamport_wait %[[KPOOL]], %{{.*}} : vector<8xbf16>
// CHECK: symm_mem.lamport_wait %[[KPOOL]], %{{.*}} : vector<8xbf16>
// CHECK: func.call @symm_epilogue_0(
// CHECK: func.call @symm_epilogue_0_step(
// CHECK: %[[PARTIAL:.*]] = gpu.all_reduce add %{{.*}} uniform
// CHECK: %[[TOTAL:.*]] = arith.addf %[[INITARG]], %[[PARTIAL]] : f32
// CHECK: func.call @symm_epilogue_0_apply(%{{.*}}, %[[TOTAL]], %{{.*}})
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr
// CHECK: gpu.barrier
// CHECK: symm_mem.set_epoch
// CHECK-LABEL: func.func @rows
// CHECK: %[[POOL:.*]] = symm_mem.pool_of
// CHECK: %[[INIT:.*]] = arith.constant 2.500000e-01 : f32
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply blocks in (%[[ROWS:.*]], %{{.*}}, %{{.*}}) threads in (%c512, %{{.*}}, %{{.*}}) args(%[[POOL]] : !symm_mem.pool, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %[[INIT]] : f32)
// NOLAMPORT: gpu.func @symm_one_shot_staged_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply(
// NOLAMPORT: symm_mem.wait_counter
// NOLAMPORT: gpu.all_reduce add %{{.*}} uniform
// NOLAMPORT: symm_mem.set_epoch
// NOLAMPORT-LABEL: func.func @rows
// NOLAMPORT: gpu.launch_func @symm_kernels::@[[KERNEL:symm_one_shot_staged_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply]]
func.func @rows(%x: memref<4x4096xbf16>, %gamma: memref<4096xbf16>, %h: memref<4x4096xbf16>, %n: memref<4x4096xbf16>) {
  %pool = symm_mem.get_global @pool : memref<65536xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<65536xi8, #symm_mem.allocator<symmetric, @tp>> to memref<4x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_rows_out sum %in epilogue(%x : memref<4x4096xbf16>) into %h rows(%gamma : memref<4096xbf16>) into %n init 0.25 group @tp algorithm one_shot {
  ^bb0(%r: bf16, %xv: bf16):
    %a = arith.extf %r : bf16 to f32
    %b = arith.extf %xv : bf16 to f32
    %s = arith.addf %a, %b : f32
    %t = arith.truncf %s : f32 to bf16
    symm_mem.epilogue_yield %t : bf16
  } step {
  ^bb0(%e: bf16, %acc: f32):
    %f = arith.extf %e : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    symm_mem.epilogue_yield %s : f32
  } apply {
  ^bb0(%e: bf16, %total: f32, %g: bf16):
    %inv = math.rsqrt %total : f32
    %f = arith.extf %e : bf16 to f32
    %gf = arith.extf %g : bf16 to f32
    %y = arith.mulf %f, %inv : f32
    %z = arith.mulf %y, %gf : f32
    %t = arith.truncf %z : f32 to bf16
    symm_mem.epilogue_yield %t : bf16
  } : memref<4x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<4x4096xbf16>, memref<4x4096xbf16>
  return
}

// -----

symm_mem.group @tp
func.func @no_world_size(%in: memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, %out: memref<16xf32>) {
  // expected-error@+1 {{'symm_mem.all_reduce_out' runs in a group without a declared world_size; kernels are specialized by it}}
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, memref<16xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @unbounded(%in: memref<?x16xf32, #symm_mem.allocator<symmetric, @tp>>, %out: memref<?x16xf32>) {
  // expected-error@+1 {{'symm_mem.all_reduce_out' has a dynamic size, but its function does not bound it}}
  symm_mem.all_reduce_out sum %in into %out group @tp : memref<?x16xf32, #symm_mem.allocator<symmetric, @tp>>, memref<?x16xf32>
  return
}

// -----

// A token bound so large that its bytes overflow is refused, not wrapped
// (symm-fuzz found the multiplication panicking).
symm_mem.group @tp world_size(2)
func.func @overflowing_bound(%in: memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, %out: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 9223372036854775807 : i64} {
  // expected-error@+1 {{'symm_mem.all_reduce_out' has up to 9223372036854775807 rows of 4096 elements (symm_mem.max_tokens), more than the kernels address}}
  symm_mem.all_reduce_out sum %in into %out group @tp : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<?x4096xbf16>
  return
}

// -----

// A bound whose elements fit but whose bytes do not.
symm_mem.group @tp world_size(2)
func.func @overflowing_bytes(%in: memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, %out: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 1125899906842624 : i64} {
  // expected-error@+1 {{'symm_mem.all_reduce_out' has more elements than the kernels address (at most 9223372036854775807 bytes)}}
  symm_mem.all_reduce_out sum %in into %out group @tp : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<?x4096xbf16>
  return
}

// -----

// A fused row statistic keeps each row in registers: rows longer than
// 16 KB are refused at the op.
symm_mem.group @tp world_size(2)
func.func @rows_too_long(%in: memref<2x16384xbf16, #symm_mem.allocator<symmetric, @tp>>, %h: memref<2x16384xbf16>, %n: memref<2x16384xbf16>) {
  // expected-error@+1 {{'symm_mem.all_reduce_rows_out' has rows of 32768 bytes; a fused row statistic takes rows of at most 16384 bytes}}
  symm_mem.all_reduce_rows_out sum %in into %h rows into %n init 0.0 group @tp algorithm auto {
  ^bb0(%r: bf16):
    symm_mem.epilogue_yield %r : bf16
  } step {
  ^bb0(%e: bf16, %acc: f32):
    %f = arith.extf %e : bf16 to f32
    %s = arith.addf %f, %acc : f32
    symm_mem.epilogue_yield %s : f32
  } apply {
  ^bb0(%e: bf16, %total: f32):
    symm_mem.epilogue_yield %e : bf16
  } : memref<2x16384xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<2x16384xbf16>, memref<2x16384xbf16>
  return
}

// -----

// The kernels' gpu.module is @symm_kernels: a program symbol of that name
// is an error at its definition, not a redefinition left behind.
symm_mem.group @tp world_size(2)
// expected-error@+1 {{'func.func' @symm_kernels takes the name of the gpu.module that holds the generated kernels; rename it}}
func.func @symm_kernels(%in: memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, %out: memref<16xf32>) {
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, memref<16xf32>
  return
}

// -----

// With launch-dependents-rows (sm_90 and up; symm-compile sets 1 from the
// chip), a rows kernel (whose normalized rows the next matmul reads) first
// lets the next grid launch for calls of at most that many rows: after the
// wait symm-wait-for-prior-grids puts first, its block per row mostly waits
// on its peers, and the matmul's blocks get resident on the other SMs
// meanwhile. Its launches carry the bound (symm.launches_dependents) for
// the generated matmul behind them. A plain all-reduce does not signal.
// Off (the default), no kernel signals.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-expand-collectives='launch-dependents-rows=1' | FileCheck %s --check-prefix=EARLY
// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-expand-collectives | FileCheck %s --check-prefix=LATE
// LATE-NOT: launch_dependents
// LATE-NOT: symm.launches_dependents
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
// EARLY-LABEL: gpu.func @symm_one_shot_lamport_sum_bf16_w2_v8(
// EARLY-NOT: launch_dependents
// EARLY-LABEL: gpu.func @symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply(
// EARLY-SAME: %[[NROWS:[^:]*]]: i64,
// EARLY: %[[FEW:.*]] = arith.cmpi ule, %[[NROWS]], %c1_i64 : i64
// EARLY-NEXT: scf.if %[[FEW]] {
// EARLY-NEXT: nvvm.griddepcontrol launch_dependents
// EARLY-LABEL: func.func @early_rows
// EARLY: gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply
// EARLY-SAME: {symm.launches_dependents = 1 : i64}
// EARLY-LABEL: func.func @plain
// EARLY: gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8 blocks
// EARLY-NOT: symm.launches_dependents
func.func @early_rows(%x: memref<?x4096xbf16>, %gamma: memref<4096xbf16>, %h: memref<?x4096xbf16>, %n: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 16 : i64} {
  %pool = symm_mem.get_global @pool : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x4096xbf16>
  %in = memref.view %pool[%c0][%m] : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>> to memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
  // expected-remark@+1 {{all_reduce of up to 16 rows of 8192 bytes on 2 ranks, a kernel per size}}
  symm_mem.all_reduce_rows_out sum %in epilogue(%x : memref<?x4096xbf16>) into %h rows(%gamma : memref<4096xbf16>) into %n init 0.25 group @tp algorithm one_shot {
  ^bb0(%r: bf16, %xv: bf16):
    %a = arith.extf %r : bf16 to f32
    %b = arith.extf %xv : bf16 to f32
    %s = arith.addf %a, %b : f32
    %t = arith.truncf %s : f32 to bf16
    symm_mem.epilogue_yield %t : bf16
  } step {
  ^bb0(%e: bf16, %acc: f32):
    %f = arith.extf %e : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    symm_mem.epilogue_yield %s : f32
  } apply {
  ^bb0(%e: bf16, %total: f32, %g: bf16):
    %inv = math.rsqrt %total : f32
    %f = arith.extf %e : bf16 to f32
    %gf = arith.extf %g : bf16 to f32
    %y = arith.mulf %f, %inv : f32
    %z = arith.mulf %y, %gf : f32
    %t = arith.truncf %z : f32 to bf16
    symm_mem.epilogue_yield %t : bf16
  } : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<?x4096xbf16>, memref<?x4096xbf16>
  return
}
func.func @plain(%out: memref<4096xbf16>) {
  %pool = symm_mem.get_global @pool : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>> to memref<4096xbf16, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<4096xbf16>
  return
}
