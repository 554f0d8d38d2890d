// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-expand-collectives --convert-symm-mem-to-runtime | FileCheck %s
// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-expand-collectives='lamport-max-bytes=0' --convert-symm-mem-to-runtime | FileCheck %s --check-prefix=STAGED
// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-expand-collectives='lamport-send=true' --convert-symm-mem-to-runtime | FileCheck %s --check-prefix=SENT
// RUN: symm-opt %s -split-input-file -verify-diagnostics --symm-mem-expand-collectives='rows-lamport-max-bytes=262144' --convert-symm-mem-to-runtime | FileCheck %s --check-prefix=ROWS256

// A planned one-shot all-reduce: the pool becomes symm_rt_global, the
// collective a launch of a kernel specialized for f32, 2 ranks, 4-wide
// vectors, taking the pool's kernel handle (its descriptor). The kernel is
// IR over the symm_mem device ops, which convert-symm-mem-to-nvvm lowers
// later. The body becomes the
// asynchronous entry point @one_shot_async (runtime handle and stream
// first, the status as result); @one_shot calls it with a null stream (the
// runtime's) and waits in symm_rt_exit. 4 KiB fit the staging slots: the
// kernel stages its input and syncs with posted counter increments, no CAS.
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: gpu.module @symm_kernels
// CHECK: gpu.func @symm_one_shot_staged_sum_f32_w2_v4(%[[KPOOL:[^:]*]]: !symm_mem.pool, %[[KIN:[^:]*]]: !llvm.ptr, %[[KOUT:[^:]*]]: !llvm.ptr, %[[NVEC:[^:]*]]: i64)
// CHECK-SAME: kernel
// CHECK: %[[BLOCK:.*]] = gpu.block_id x
// CHECK: %[[RANK:.*]] = symm_mem.pool_rank %[[KPOOL]]
// CHECK: %[[EPOCH:.*]] = symm_mem.epoch %[[KPOOL]] channel %[[BLOCK]]
// CHECK: %[[PARITY:.*]] = arith.andi %[[EPOCH]]
// CHECK: %[[SLOT:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK: %[[NEXT:.*]] = arith.addi %[[EPOCH]], %{{.*}} : i32
// CHECK: %[[MINE:.*]] = symm_mem.staging_slot %[[KPOOL]][%[[RANK]]] slot %[[SLOT]]
// CHECK: %[[S0:.*]] = symm_mem.staging_slot %[[KPOOL]][%{{.*}}] slot %[[SLOT]]
// CHECK: %[[S1:.*]] = symm_mem.staging_slot %[[KPOOL]][%{{.*}}] slot %[[SLOT]]
// CHECK: scf.for
// CHECK: llvm.load %{{.*}} : !llvm.ptr -> vector<4xf32>
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[MINE]]
// CHECK: llvm.store %{{.*}}, %[[TO]]
// CHECK: gpu.barrier
// CHECK: scf.if
// CHECK: symm_mem.add_counter %[[KPOOL]] to %[[PEER:.*]] channel %[[BLOCK]]
// CHECK: symm_mem.wait_counter %[[KPOOL]] from %[[PEER]] channel %[[BLOCK]] reaches %[[NEXT]]
// CHECK: gpu.barrier
// CHECK-NOT: symm_mem.barrier
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %[[NVEC]]
// CHECK: llvm.getelementptr %[[S0]][%[[I]]]
// CHECK: llvm.getelementptr %[[S1]][%[[I]]]
// CHECK: arith.addf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: llvm.getelementptr %[[KOUT]][%[[I]]]
// CHECK: symm_mem.set_epoch %[[KPOOL]] channel %[[BLOCK]] to %[[NEXT]]
// CHECK-LABEL: func.func @one_shot_async
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr, %[[STREAM:[^:]*]]: !llvm.ptr, %[[OUT:[^:]*]]: !llvm.ptr) -> i32
// CHECK-SAME: symm.async_entry
// CHECK: call @symm_rt_enter_async(%[[RT]], %[[STREAM]])
// CHECK: call @symm_rt_check_world(%[[RT]], %{{.*}}) : (!llvm.ptr, i64) -> ()
// (No generated matmuls: no SM count to compare.)
// CHECK-NOT: symm_rt_check_sms
// CHECK: %[[BASE:.*]] = {{(func\.)?}}call @symm_rt_global(%[[RT]], %{{.*}}, %{{.*}}) : (!llvm.ptr, i64, i64) -> !llvm.ptr
// CHECK: %[[POOL:.*]] = builtin.unrealized_conversion_cast %{{.*}} to memref<4096xi8>
// CHECK: %[[VIEW:.*]] = memref.view %[[POOL]]
// CHECK: %[[DESC:.*]] = {{(func\.)?}}call @symm_rt_pool_descriptor(%[[RT]], %{{.*}}) :
// CHECK: %[[HANDLE:.*]] = builtin.unrealized_conversion_cast %[[DESC]] : !llvm.ptr to !symm_mem.pool
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_staged_sum_f32_w2_v4 blocks in (%{{.*}}) threads in (%{{.*}}) args(%[[HANDLE]] : !symm_mem.pool, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64)
// CHECK: %[[STATUS:.*]] = call @symm_rt_exit_async(%[[RT]]) : (!llvm.ptr) -> i32
// CHECK-NEXT: return %[[STATUS]] : i32
// CHECK-LABEL: func.func @one_shot(
// CHECK-SAME: %[[RT:[^:]*]]: !llvm.ptr, %[[OUT:[^:]*]]: !llvm.ptr) attributes {symm.runtime_handle}
// CHECK-NEXT: %[[NULL:.*]] = llvm.mlir.zero : !llvm.ptr
// CHECK-NEXT: %{{.*}} = call @one_shot_async(%[[RT]], %[[NULL]], %[[OUT]])
// CHECK-NEXT: call @symm_rt_exit(%[[RT]])
// CHECK-NEXT: return
// CHECK: func.func private @symm_rt_global(!llvm.ptr, i64, i64) -> !llvm.ptr
func.func @one_shot(%out: memref<32x32xf32>) {
  %pool = symm_mem.get_global @pool : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>> to memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>, memref<32x32xf32>
  return
}

// -----

// Above the staging cap (512 KiB) the one-shot keeps its two CAS barriers.
symm_mem.group @tp world_size(2)
symm_mem.global @big alignment(128) : memref<1048576xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: gpu.func @symm_one_shot_sum_f32_w2_v4(%[[POOL:[^:]*]]: !symm_mem.pool, %[[IN:[^:]*]]: !llvm.ptr
// CHECK: %[[BLOCK:.*]] = gpu.block_id x
// CHECK: %[[P0:.*]] = symm_mem.peer_ptr %[[POOL]][%{{.*}}], %[[IN]] : !llvm.ptr
// CHECK: %[[P1:.*]] = symm_mem.peer_ptr %[[POOL]][%{{.*}}], %[[IN]] : !llvm.ptr
// CHECK: symm_mem.barrier %[[POOL]] channel %[[BLOCK]]
// CHECK: scf.for
// CHECK: llvm.getelementptr %[[P0]]
// CHECK: llvm.getelementptr %[[P1]]
// CHECK: symm_mem.barrier %[[POOL]] channel %[[BLOCK]]
// CHECK-NOT: symm_mem.add_counter
// CHECK-LABEL: func.func @big_one_shot
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_sum_f32_w2_v4 blocks
func.func @big_one_shot(%out: memref<512x512xf32>) {
  %pool = symm_mem.get_global @big : memref<1048576xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<1048576xi8, #symm_mem.allocator<symmetric, @tp>> to memref<512x512xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<512x512xf32, #symm_mem.allocator<symmetric, @tp>>, memref<512x512xf32>
  return
}

// -----

// all_reduce_out picks by size; bf16 two-shot on 4 ranks above the
// threshold; max reduces with maxnum in f32. Nothing reads the input
// afterwards, so the kernel pushes reduced chunks into the peers' inputs:
// one barrier after the pushes, no middle one.
symm_mem.group @tp4 world_size(4)
symm_mem.global @pool4 alignment(128) : memref<4194304xi8, #symm_mem.allocator<symmetric, @tp4>>
// CHECK: gpu.func @symm_two_shot_push_max_bf16_w4_v8(
// CHECK: symm_mem.barrier
// CHECK: arith.extf %{{.*}} : vector<8xbf16> to vector<8xf32>
// CHECK: arith.maxnumf
// CHECK: arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// CHECK-COUNT-4: scf.if %{{.*}} {
// CHECK-NEXT: llvm.getelementptr
// CHECK-NEXT: llvm.store %{{.*}} : vector<8xbf16>, !llvm.ptr
// CHECK: symm_mem.barrier
// CHECK-NOT: symm_mem.barrier
// CHECK: gpu.return
// CHECK-LABEL: func.func @auto_two_shot
// CHECK: gpu.launch_func @symm_kernels::@symm_two_shot_push_max_bf16_w4_v8
func.func @auto_two_shot(%out: memref<2048x1024xbf16>) {
  %pool = symm_mem.get_global @pool4 : memref<4194304xi8, #symm_mem.allocator<symmetric, @tp4>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<4194304xi8, #symm_mem.allocator<symmetric, @tp4>> to memref<2048x1024xbf16, #symm_mem.allocator<symmetric, @tp4>>
  symm_mem.all_reduce_out max %in into %out group @tp4 : memref<2048x1024xbf16, #symm_mem.allocator<symmetric, @tp4>>, memref<2048x1024xbf16>
  return
}

// -----

// The output is symmetric too (symm-mem-realize made it so for the push):
// reduced chunks go straight into the peers' outputs, found through the
// output's own descriptor and offset; nothing to copy after the barrier.
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<8388608xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: gpu.func @symm_two_shot_push_out_sum_f32_w2_v4(
// CHECK-SAME: %[[KPOOL:[^:]*]]: !symm_mem.pool, %{{.*}}: !llvm.ptr, %[[KOUT:[^:]*]]: !llvm.ptr, %{{.*}}: i64, %[[KOUT_POOL:[^:]*]]: !symm_mem.pool)
// CHECK: symm_mem.peer_ptr %[[KOUT_POOL]][%{{.*}}], %[[KOUT]]
// CHECK: symm_mem.barrier %[[KPOOL]]
// The pushes: UNROLL (4) vectors loaded from both ranks, then each reduced
// and stored; then the rest one at a time.
// CHECK: scf.for
// CHECK-COUNT-8: llvm.load
// CHECK: arith.addf
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: symm_mem.barrier %[[KPOOL]]
// CHECK-NOT: scf.for
// CHECK: gpu.return
// CHECK-LABEL: func.func @push_into_outputs
// CHECK: %[[IN_DESC:.*]] = {{(func\.)?}}call @symm_rt_pool_descriptor(%{{.*}}, %{{.*}}) :
// CHECK: %[[IN_POOL:.*]] = builtin.unrealized_conversion_cast %[[IN_DESC]] : !llvm.ptr to !symm_mem.pool
// CHECK: %[[OUT_DESC:.*]] = {{(func\.)?}}call @symm_rt_pool_descriptor(%{{.*}}, %{{.*}}) :
// CHECK: %[[OUT_POOL:.*]] = builtin.unrealized_conversion_cast %[[OUT_DESC]] : !llvm.ptr to !symm_mem.pool
// CHECK: gpu.launch_func @symm_kernels::@symm_two_shot_push_out_sum_f32_w2_v4 {{.*}} args(%[[IN_POOL]] : !symm_mem.pool, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, {{.*}}, %[[OUT_POOL]] : !symm_mem.pool)
func.func @push_into_outputs() {
  %pool = symm_mem.get_global @pool : memref<8388608xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %c4m = arith.constant 4194304 : index
  %in = memref.view %pool[%c0][] : memref<8388608xi8, #symm_mem.allocator<symmetric, @tp>> to memref<1048576xf32, #symm_mem.allocator<symmetric, @tp>>
  %out = memref.view %pool[%c4m][] : memref<8388608xi8, #symm_mem.allocator<symmetric, @tp>> to memref<1048576xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm two_shot : memref<1048576xf32, #symm_mem.allocator<symmetric, @tp>>, memref<1048576xf32, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

// The input is read after the all-reduce: the two-shot must not overwrite
// it, so it reads the reduced chunks back after a middle barrier (pull).
symm_mem.group @tp4 world_size(4)
symm_mem.global @pool4 alignment(128) : memref<4194304xi8, #symm_mem.allocator<symmetric, @tp4>>
// CHECK: gpu.func @symm_two_shot_sum_bf16_w4_v8(
// CHECK-COUNT-3: symm_mem.barrier
// CHECK-NOT: symm_mem.barrier
// CHECK: gpu.return
// CHECK-LABEL: func.func @pull_two_shot
// CHECK: gpu.launch_func @symm_kernels::@symm_two_shot_sum_bf16_w4_v8
// CHECK: {{(func\.)?}}call @symm_rt_copy(
func.func @pull_two_shot(%out: memref<2048x1024xbf16>, %keep: memref<2048x1024xbf16>) {
  %pool = symm_mem.get_global @pool4 : memref<4194304xi8, #symm_mem.allocator<symmetric, @tp4>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<4194304xi8, #symm_mem.allocator<symmetric, @tp4>> to memref<2048x1024xbf16, #symm_mem.allocator<symmetric, @tp4>>
  symm_mem.all_reduce_out sum %in into %out group @tp4 algorithm two_shot : memref<2048x1024xbf16, #symm_mem.allocator<symmetric, @tp4>>, memref<2048x1024xbf16>
  memref.copy %in, %keep : memref<2048x1024xbf16, #symm_mem.allocator<symmetric, @tp4>> to memref<2048x1024xbf16>
  return
}

// -----

// Regular buffers, copies and matmuls become runtime calls (cuBLAS).
// CHECK-LABEL: func.func @runtime_calls_async
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[A:[^:]*]]: !llvm.ptr, %[[B:[^:]*]]: !llvm.ptr, %[[C:[^:]*]]: !llvm.ptr)
// CHECK: %[[P:.*]] = {{(func\.)?}}call @symm_rt_alloc(%[[RT]], %{{.*}}) : (!llvm.ptr, i64) -> !llvm.ptr
// CHECK: {{(func\.)?}}call @symm_rt_matmul(%[[RT]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i32, i32) -> ()
// CHECK: {{(func\.)?}}call @symm_rt_copy(%[[RT]],
// CHECK: {{(func\.)?}}call @symm_rt_free(%[[RT]],
func.func @runtime_calls(%a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  %t = memref.alloc() : memref<4x16xf32>
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%t : memref<4x16xf32>)
  memref.copy %t, %c : memref<4x16xf32> to memref<4x16xf32>
  memref.dealloc %t : memref<4x16xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @unplanned_memref_alloc(%out: memref<16xf32>) {
  // expected-error@+1 {{'memref.alloc' allocates in symmetric memory (memref<16xf32, #symm_mem.allocator<symmetric, @tp>>) but symm-mem-plan did not place it in a pool (see its remark)}}
  %b = memref.alloc() : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %b into %out group @tp algorithm one_shot : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, memref<16xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @unplanned(%out: memref<16xf32>) {
  // expected-error@+1 {{'symm_mem.alloc' is not planned into a pool yet: run symm-mem-plan}}
  %b = symm_mem.alloc() : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %b into %out group @tp algorithm one_shot : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, memref<16xf32>
  return
}

// -----

symm_mem.group @tp world_size(2)
func.func @functional(%x: memref<16xf32, #symm_mem.allocator<symmetric, @tp>>) -> memref<16xf32> {
  // expected-error@+1 {{'symm_mem.all_reduce' allocates its result: run symm-mem-to-dps}}
  %r = symm_mem.all_reduce sum %x group @tp : memref<16xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<16xf32>
  return %r : memref<16xf32>
}

// -----

symm_mem.group @tp
symm_mem.global @p alignment(128) : memref<64xi8, #symm_mem.allocator<symmetric, @tp>>
func.func @no_world(%out: memref<16xf32>) {
  %pool = symm_mem.get_global @p : memref<64xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<64xi8, #symm_mem.allocator<symmetric, @tp>> to memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  // expected-error@+1 {{runs in a group without a declared world_size; kernels are specialized by it}}
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, memref<16xf32>
  return
}

// -----

// expected-error@+1 {{holds collectives or device memory but is private}}
func.func private @helper(%a: memref<4x4xf32>, %b: memref<4x4xf32>, %c: memref<4x4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// Dynamic sizes: only leading ones, and only in a function that bounds
// them (symm_mem.max_tokens).
// expected-error@+1 {{takes memrefs of dynamic size; declare the largest token count it takes with `attributes {symm_mem.max_tokens = N : i64}`}}
func.func @unbounded(%x: memref<?x16xf32>, %y: memref<?x16xf32>) {
  memref.copy %x, %y : memref<?x16xf32> to memref<?x16xf32>
  return
}

// -----

// expected-error@+1 {{takes memref<16x?xf32> (argument #0): an entry point's memrefs have the default layout and static sizes but for the leading one (the token count)}}
func.func @inner_dynamic(%x: memref<16x?xf32>, %y: memref<16x?xf32>) attributes {symm_mem.max_tokens = 64 : i64} {
  memref.copy %x, %y : memref<16x?xf32> to memref<16x?xf32>
  return
}

// -----

func.func @dynamic_columns(%n: index) {
  // expected-error@+1 {{'memref.alloc' has dynamic sizes beyond the leading dimension (memref<4x?xf32>), which the GPU lowering does not support}}
  %t = memref.alloc(%n) : memref<4x?xf32>
  return
}

// -----

// A matmul whose output map is transposed (C^T = A B) is not the plain
// product cuBLAS is asked for: refused, not lowered as one.
func.func @transposed_output(%a: memref<4x8xf32>, %b: memref<8x4xf32>, %c: memref<4x4xf32>) {
  // expected-error@+1 {{'linalg.matmul' has indexing maps that are not a matmul's with each input as written or transposed (a broadcast, or a transposed output), which cuBLAS does not run}}
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                 affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d1, d0)>]
    ins(%a, %b : memref<4x8xf32>, memref<8x4xf32>) outs(%c : memref<4x4xf32>)
  return
}

// -----

// An entry point of plain kernels takes the runtime too, so it runs on the
// caller's stream, asynchronously, and its failures are reported.
#id = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @plain_kernels_async
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr, %[[STREAM:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr) -> i32
// CHECK: call @symm_rt_enter_async(%[[RT]], %[[STREAM]])
// CHECK: linalg.generic
// CHECK: call @symm_rt_exit_async(%[[RT]])
// CHECK-LABEL: func.func @plain_kernels(
// CHECK-LABEL: func.func private @helper(
// CHECK-SAME: %{{[^:]*}}: memref<256xf32>) {
// CHECK-NEXT: linalg.generic
func.func @plain_kernels(%a: memref<256xf32>, %b: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  }
  return
}
// Private helpers of plain kernels stay as they are.
func.func private @helper(%a: memref<256xf32>) {
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel"]}
      outs(%a : memref<256xf32>) {
  ^bb0(%o: f32):
    linalg.yield %o : f32
  }
  return
}

// -----

// The asynchronous entry point's name must be free.
// expected-error@+1 {{its asynchronous entry point would be @step_async, which the module defines already; rename one of them}}
func.func @step(%a: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      outs(%a : memref<256xf32>) {
  ^bb0(%o: f32):
    linalg.yield %o : f32
  }
  return
}
func.func private @step_async()

// -----

// A dynamic token count: the entry point takes the count (an index, checked
// against symm_mem.max_tokens at run time) and the data pointer of each
// dynamic memref, rebuilt inside with that many rows. The matmul's rows and
// the all-reduce's size come from it; the all-reduce picks its kernel per
// call by byte size: the Lamport one-shot up to 4 MiB, push two-shot to
// 8 MiB, one-shot above (the output is not symmetric).
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK-LABEL: func.func @tokens_async
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr, %[[STREAM:[^:]*]]: !llvm.ptr, %[[N:[^:]*]]: index, %[[XP:[^:]*]]: !llvm.ptr, %[[W:[^:]*]]: !llvm.ptr, %[[OP:[^:]*]]: !llvm.ptr) -> i32
// Every entry point first checks that the runtime speaks the protocol it
// was compiled with (symm_protocol::PROTOCOL_FINGERPRINT), then the world.
// CHECK: call @symm_rt_enter_async(%[[RT]], %[[STREAM]])
// CHECK-NEXT: %[[FINGERPRINT:.*]] = arith.constant {{[0-9]+}} : i64
// CHECK-NEXT: call @symm_rt_check_protocol(%[[RT]], %[[FINGERPRINT]]) : (!llvm.ptr, i64) -> ()
// CHECK: call @symm_rt_check_world(%[[RT]], %{{.*}}) : (!llvm.ptr, i64) -> ()
// CHECK: %[[N64:.*]] = arith.index_cast %[[N]] : index to i64
// CHECK: call @symm_rt_check_tokens(%[[RT]], %[[N64]], %{{.*}}) : (!llvm.ptr, i64, i64) -> ()
// CHECK: %[[X:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<?x64xbf16>
// CHECK: %[[OUT:.*]] = builtin.unrealized_conversion_cast %{{.*}} : !llvm.struct<{{.*}}> to memref<?x4096xbf16>
// CHECK: call @symm_rt_global
// CHECK: %[[ROWS:[a-z0-9_]+]] = memref.dim %[[X]], %{{.*}} : memref<?x64xbf16>
// CHECK-NEXT: %[[M:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: call @symm_rt_matmul(%[[RT]], %{{.*}}, %{{.*}}, %{{.*}}, %[[M]],
// CHECK: %[[COUNT:.*]] = arith.muli %{{.*}}, %c4096_i64{{.*}} : i64
// CHECK: %[[BYTES:.*]] = arith.muli %[[COUNT]], %c2_i64{{.*}} : i64
// CHECK: %[[LIMIT:.*]] = arith.constant 4194304 : i64
// CHECK: %[[SMALL:.*]] = arith.cmpi ule, %[[BYTES]], %[[LIMIT]] : i64
// CHECK: scf.if %[[SMALL]] {
// CHECK:   gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8
// CHECK: } else {
// CHECK:   %[[PUSH:.*]] = arith.constant 8388608 : i64
// CHECK:   %[[MID:.*]] = arith.cmpi ule, %[[BYTES]], %[[PUSH]] : i64
// CHECK:   scf.if %[[MID]] {
// CHECK:     gpu.launch_func @symm_kernels::@symm_two_shot_push_sum_bf16_w2_v8
// CHECK:   } else {
// CHECK:     gpu.launch_func @symm_kernels::@symm_one_shot_sum_bf16_w2_v8
// CHECK-LABEL: func.func @tokens(
// CHECK-SAME: %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: index, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
func.func @tokens(%x: memref<?x64xbf16>, %w: memref<64x4096xbf16>, %out: memref<?x4096xbf16>) attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xbf16>
  %pool = symm_mem.get_global @pool : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
  %p = memref.view %pool[%c0][%n] : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>> to memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
  linalg.matmul ins(%x, %w : memref<?x64xbf16>, memref<64x4096xbf16>) outs(%p : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>)
  // expected-remark@+1 {{all_reduce of up to 2048 rows of 8192 bytes on 2 ranks, a kernel per size}}
  symm_mem.all_reduce_out sum %p into %out group @tp : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<?x4096xbf16>
  return
}

// -----

// A symmetric buffer of no bytes is no pool's: a located refusal, not the
// advice to plan it.
symm_mem.group @tp world_size(2)
func.func @empty() {
  // expected-error@+1 {{'symm_mem.alloc' allocates no bytes (memref<0xf32, #symm_mem.allocator<symmetric, @tp>>); remove it}}
  %a = symm_mem.alloc() : memref<0xf32, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

// A zero fill right before the matmul that writes the buffer is folded
// into it (cuBLAS with beta = 0: the last argument, accumulate, is 0); a
// fill something else reads first stays, and its matmul accumulates.
// CHECK-LABEL: func.func @fill_then_matmul_async
// CHECK-NOT: linalg.fill
// CHECK: call @symm_rt_matmul({{.*}}, %c0_i32{{(_[0-9]+)?}}) :
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: call @symm_rt_matmul({{.*}}, %c1_i32{{(_[0-9]+)?}}) :
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @fill_then_matmul(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>, %d: memref<4x16xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  linalg.fill ins(%zero : bf16) outs(%d : memref<4x16xbf16>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d : memref<4x16xbf16>) outs(%c : memref<4x16xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    linalg.yield %v : bf16
  }
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%d : memref<4x16xbf16>)
  return
}

// -----

// A view of the buffer, taken before the fill and read between it and the
// matmul, sees the zeros, so the fill stays and the matmul accumulates.
// CHECK-LABEL: func.func @fill_view_read_matmul_async
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: call @symm_rt_matmul({{.*}}, %c1_i32{{(_[0-9]+)?}}) :
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @fill_view_read_matmul(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>, %e: memref<4x16xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %view = memref.cast %c : memref<4x16xbf16> to memref<?x16xbf16>
  %back = memref.cast %view : memref<?x16xbf16> to memref<4x16xbf16>
  linalg.fill ins(%zero : bf16) outs(%c : memref<4x16xbf16>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%back : memref<4x16xbf16>) outs(%e : memref<4x16xbf16>) {
  ^bb0(%v: bf16, %o: bf16):
    linalg.yield %v : bf16
  }
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  return
}

// -----

// Uses of the buffer after the matmul, in a nested block included, see the
// matmul's result, never the zeros: the fill folds (a down projection whose
// output an all-reduce's dispatch reads under scf.if).
// CHECK-LABEL: func.func @fill_matmul_nested_use_async
// CHECK-NOT: linalg.fill
// CHECK: call @symm_rt_matmul({{.*}}, %c0_i32{{(_[0-9]+)?}}) :
// CHECK: scf.if
// CHECK: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @fill_matmul_nested_use(%a: memref<4x8xbf16>, %b: memref<8x16xbf16>, %c: memref<4x16xbf16>,
                                  %e: memref<4x16xbf16>, %flag: i1) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xbf16>) outs(%c : memref<4x16xbf16>)
  scf.if %flag {
    linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%c : memref<4x16xbf16>) outs(%e : memref<4x16xbf16>) {
    ^bb0(%v: bf16, %o: bf16):
      linalg.yield %v : bf16
    }
  }
  return
}

// -----

// The matmul's left operand is a view of the buffer it writes: it would
// read the zeros, so the fill stays and the matmul accumulates.
// CHECK-LABEL: func.func @fill_matmul_reads_own_output_async
// CHECK: linalg.fill
// CHECK: call @symm_rt_matmul({{.*}}, %c1_i32{{(_[0-9]+)?}}) :
func.func @fill_matmul_reads_own_output(%b: memref<16x16xbf16>, %c: memref<4x16xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %a = memref.cast %c : memref<4x16xbf16> to memref<?x16xbf16>
  %a4 = memref.cast %a : memref<?x16xbf16> to memref<4x16xbf16>
  linalg.fill ins(%zero : bf16) outs(%c : memref<4x16xbf16>)
  linalg.matmul ins(%a4, %b : memref<4x16xbf16>, memref<16x16xbf16>) outs(%c : memref<4x16xbf16>)
  return
}


// -----

// Two matmuls reading the same activations (a gate and an up projection),
// one right after the other, become one symm_rt_matmul_pair at the second
// (one batched GEMM over both weights): activations, then each weight and
// output, then m, n, k, dtype and accumulate. A third matmul reading the
// second's output is not paired with it.
// CHECK-LABEL: func.func @gate_up_async
// CHECK-SAME: (%[[RT:.*]]: !llvm.ptr, %{{.*}}: !llvm.ptr, %[[X:[^:]*]]: !llvm.ptr, %[[WG:[^:]*]]: !llvm.ptr, %[[WU:[^:]*]]: !llvm.ptr, %[[WD:[^:]*]]: !llvm.ptr, %[[G:[^:]*]]: !llvm.ptr, %[[U:[^:]*]]: !llvm.ptr, %[[D:[^:]*]]: !llvm.ptr)
// CHECK-NOT: call @symm_rt_matmul(
// CHECK: call @symm_rt_matmul_pair(%[[RT]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c0_i32{{(_[0-9]+)?}}, %c0_i32{{(_[0-9]+)?}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, !llvm.ptr, i64, i64, i64, i32, i32, i32) -> ()
// CHECK-NOT: call @symm_rt_matmul_pair(
// CHECK: call @symm_rt_matmul(%[[RT]],
func.func @gate_up(%x: memref<4x64xbf16>, %wg: memref<64x128xbf16>, %wu: memref<64x128xbf16>, %wd: memref<128x64xbf16>,
                   %g: memref<4x128xbf16>, %u: memref<4x128xbf16>, %d: memref<4x64xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%g : memref<4x128xbf16>)
  linalg.matmul ins(%x, %wg : memref<4x64xbf16>, memref<64x128xbf16>) outs(%g : memref<4x128xbf16>)
  linalg.fill ins(%zero : bf16) outs(%u : memref<4x128xbf16>)
  linalg.matmul ins(%x, %wu : memref<4x64xbf16>, memref<64x128xbf16>) outs(%u : memref<4x128xbf16>)
  linalg.fill ins(%zero : bf16) outs(%d : memref<4x64xbf16>)
  linalg.matmul ins(%u, %wd : memref<4x128xbf16>, memref<128x64xbf16>) outs(%d : memref<4x64xbf16>)
  return
}

// -----

// Matmuls with the same activations but an accumulating one between are not
// siblings: the first overwrites, the second accumulates.
// CHECK-LABEL: func.func @not_siblings_async
// CHECK-NOT: symm_rt_matmul_pair
// CHECK: call @symm_rt_matmul(
// CHECK: call @symm_rt_matmul(
func.func @not_siblings(%x: memref<4x64xbf16>, %wg: memref<64x128xbf16>, %wu: memref<64x128xbf16>,
                        %g: memref<4x128xbf16>, %u: memref<4x128xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%g : memref<4x128xbf16>)
  linalg.matmul ins(%x, %wg : memref<4x64xbf16>, memref<64x128xbf16>) outs(%g : memref<4x128xbf16>)
  linalg.matmul ins(%x, %wu : memref<4x64xbf16>, memref<64x128xbf16>) outs(%u : memref<4x128xbf16>)
  return
}

// -----

// Weights in nn.Linear's layout (n x k: checkpoints, vLLM, TensorRT-LLM),
// read through transposed maps, at a dynamic token count. The gate and up
// projections are still siblings: one symm_rt_matmul_pair, layout code 1
// (SYMM_TRANSPOSED_B) last. The down projection is a strided GEMM of one:
// symm_rt_batch_matmul with batch 1, m from the activations' rows, n 64,
// k 128, its weight's rows of k = 128 (batch strides 0), layout code 1.
#lin_a = affine_map<(m, n, k) -> (m, k)>
#lin_b = affine_map<(m, n, k) -> (n, k)>
#lin_c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @linear_layout_async
// CHECK: call @symm_rt_matmul_pair(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c128_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c2_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}})
// CHECK: %[[ROWS:[a-z0-9_]+]] = memref.dim %{{.*}}, %{{.*}} : memref<?x128xbf16>
// CHECK-NEXT: %[[M:.*]] = arith.index_cast %[[ROWS]] : index to i64
// CHECK: call @symm_rt_batch_matmul(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c1_i64{{[_0-9]*}}, %[[M]], %c64_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c2_i32{{[_0-9]*}}, %c2_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}})
// CHECK-NOT: symm_rt_matmul(
func.func @linear_layout(%x: memref<?x64xbf16>, %wg: memref<128x64xbf16>, %wu: memref<128x64xbf16>,
                         %wd: memref<64x128xbf16>, %g: memref<?x128xbf16>, %u: memref<?x128xbf16>,
                         %d: memref<?x64xbf16>) attributes {symm_mem.max_tokens = 64 : i64} {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%g : memref<?x128xbf16>)
  linalg.matmul indexing_maps = [#lin_a, #lin_b, #lin_c]
    ins(%x, %wg : memref<?x64xbf16>, memref<128x64xbf16>) outs(%g : memref<?x128xbf16>)
  linalg.fill ins(%zero : bf16) outs(%u : memref<?x128xbf16>)
  linalg.matmul indexing_maps = [#lin_a, #lin_b, #lin_c]
    ins(%x, %wu : memref<?x64xbf16>, memref<128x64xbf16>) outs(%u : memref<?x128xbf16>)
  linalg.fill ins(%zero : bf16) outs(%d : memref<?x64xbf16>)
  linalg.matmul indexing_maps = [#lin_a, #lin_b, #lin_c]
    ins(%u, %wd : memref<?x128xbf16>, memref<64x128xbf16>) outs(%d : memref<?x64xbf16>)
  return
}

// -----

// A merged gate_up weight in nn.Linear's layout (2F x K, vLLM's
// MergedColumnParallelLinear) read as its two row halves: views at offsets
// 0 and F K = 8192 elements. Neither is a whole buffer, so each is a strided
// GEMM: the second's address is the weight's plus 16384 bytes. A view
// that takes every other column has rows cuBLAS cannot read: refused.
#mg_a = affine_map<(m, n, k) -> (m, k)>
#mg_b = affine_map<(m, n, k) -> (n, k)>
#mg_c = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @merged_gate_up_async
// CHECK: call @symm_rt_batch_matmul(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c1_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}, %c2_i32{{[_0-9]*}}, %c2_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}})
// CHECK: %[[INTPTR:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<128x64xbf16, strided<[64, 1], offset: 8192>> -> index
// CHECK-NEXT: %[[BASE:.*]] = arith.index_cast %[[INTPTR]] : index to i64
// CHECK-NEXT: %[[SHIFT:.*]] = arith.constant 16384 : i64
// CHECK-NEXT: %[[UP:.*]] = arith.addi %[[BASE]], %[[SHIFT]] : i64
// CHECK-NEXT: %[[UP_PTR:.*]] = llvm.inttoptr %[[UP]] : i64 to !llvm.ptr
// CHECK: call @symm_rt_batch_matmul(%{{[^,]*}}, %{{[^,]*}}, %[[UP_PTR]], %{{[^,]*}}, %c1_i64
func.func @merged_gate_up(%x: memref<4x64xbf16>, %w: memref<256x64xbf16>,
                          %g: memref<4x128xbf16>, %u: memref<4x128xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %wg = memref.subview %w[0, 0] [128, 64] [1, 1] : memref<256x64xbf16> to memref<128x64xbf16, strided<[64, 1]>>
  %wu = memref.subview %w[128, 0] [128, 64] [1, 1] : memref<256x64xbf16> to memref<128x64xbf16, strided<[64, 1], offset: 8192>>
  linalg.fill ins(%zero : bf16) outs(%g : memref<4x128xbf16>)
  linalg.matmul indexing_maps = [#mg_a, #mg_b, #mg_c]
    ins(%x, %wg : memref<4x64xbf16>, memref<128x64xbf16, strided<[64, 1]>>) outs(%g : memref<4x128xbf16>)
  linalg.fill ins(%zero : bf16) outs(%u : memref<4x128xbf16>)
  linalg.matmul indexing_maps = [#mg_a, #mg_b, #mg_c]
    ins(%x, %wu : memref<4x64xbf16>, memref<128x64xbf16, strided<[64, 1], offset: 8192>>) outs(%u : memref<4x128xbf16>)
  return
}

// -----

func.func @every_other_column(%x: memref<4x32xbf16>, %w: memref<128x64xbf16>, %y: memref<4x128xbf16>) {
  %half = memref.subview %w[0, 0] [128, 32] [1, 2] : memref<128x64xbf16> to memref<128x32xbf16, strided<[64, 2]>>
  // expected-error@+1 {{'linalg.matmul' has a right-hand side whose rows are not contiguous (memref<128x32xbf16, strided<[64, 2]>>); cuBLAS reads unit-stride rows}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>, affine_map<(m, n, k) -> (n, k)>, affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %half : memref<4x32xbf16>, memref<128x32xbf16, strided<[64, 2]>>) outs(%y : memref<4x128xbf16>)
  return
}

// -----

// Argument attributes about memrefs served the middle end; the entry point
// takes pointers, so they go (they would not verify on !llvm.ptr).
symm_mem.group @tp world_size(2)
// CHECK-LABEL: func.func @with_arg_attr_async
// CHECK-NOT: symm_mem.symmetric
// CHECK: return
func.func @with_arg_attr(%a: memref<256xf32> {symm_mem.symmetric = #symm_mem.allocator<symmetric, @tp>}, %b: memref<256xf32>) {
  memref.copy %a, %b : memref<256xf32> to memref<256xf32>
  return
}

// -----

// Comm buffers become plain memrefs everywhere, by a type conversion: in a
// private helper that takes one (its signature, scf.for iter_args, loads,
// stores, subviews) as in the entry point that calls it.
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK-LABEL: func.func private @scale
// CHECK-SAME: (%[[BUF:[^:]*]]: memref<16xf32>, %{{[^:]*}}: index) -> memref<16xf32>
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[BUF]]) -> (memref<16xf32>)
// CHECK: memref.load %[[ACC]][%{{.*}}] : memref<16xf32>
// CHECK: memref.store %{{.*}}, %[[ACC]][%{{.*}}] : memref<16xf32>
// CHECK: scf.yield %[[ACC]] : memref<16xf32>
// CHECK: memref.subview %[[R]][0] [8] [1] : memref<16xf32> to memref<8xf32, strided<[1]>>
// CHECK: return %[[R]] : memref<16xf32>
// CHECK-LABEL: func.func @entry_async
// CHECK: %[[VIEW:.*]] = memref.view %{{.*}}[%{{.*}}][] : memref<4096xi8> to memref<16xf32>
// CHECK: call @scale(%[[VIEW]], %{{.*}}) : (memref<16xf32>, index) -> memref<16xf32>
// CHECK-NOT: #symm_mem.allocator
func.func private @scale(%buf: memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, %n: index) -> memref<16xf32, #symm_mem.allocator<symmetric, @tp>> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %buf) -> (memref<16xf32, #symm_mem.allocator<symmetric, @tp>>) {
    %v = memref.load %acc[%i] : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
    memref.store %v, %acc[%i] : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
    scf.yield %acc : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  }
  %sub = memref.subview %r[0] [8] [1] : memref<16xf32, #symm_mem.allocator<symmetric, @tp>> to memref<8xf32, strided<[1]>, #symm_mem.allocator<symmetric, @tp>>
  return %r : memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
}
func.func @entry(%n: index) {
  %pool = symm_mem.get_global @pool : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %buf = memref.view %pool[%c0][] : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>> to memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  %r = func.call @scale(%buf, %n) : (memref<16xf32, #symm_mem.allocator<symmetric, @tp>>, index) -> memref<16xf32, #symm_mem.allocator<symmetric, @tp>>
  return
}

// -----

// Function ops without a builtin function type (an llvm.func in a
// gpu.module) pass the type conversion untouched (their legality check
// once assumed func.func's type and crashed, found by symm-fuzz).
// CHECK-LABEL: gpu.module @kernels
// CHECK: llvm.func @__nv_expf(f32) -> f32
// CHECK: llvm.func @k(%[[X:.*]]: f32) -> f32
// CHECK: llvm.call @__nv_expf(%[[X]])
module attributes {gpu.container_module} {
  gpu.module @kernels {
    llvm.func @__nv_expf(f32) -> f32
    llvm.func @k(%x: f32) -> f32 {
      %y = llvm.call @__nv_expf(%x) : (f32) -> f32
      llvm.return %y : f32
    }
  }
}

// -----

// A matmul cuBLAS cannot run is an error at the op, alone or as one of a
// sibling pair.
func.func @mixed_matmul(%a: memref<4x8xbf16>, %b: memref<8x16xf32>, %c: memref<4x16xbf16>) {
  // expected-error@+1 {{'linalg.matmul' mixes element types; cuBLAS is called with one}}
  linalg.matmul ins(%a, %b : memref<4x8xbf16>, memref<8x16xf32>) outs(%c : memref<4x16xbf16>)
  return
}

// -----

func.func @mixed_pair(%x: memref<4x64xbf16>, %wg: memref<64x128xf32>, %wu: memref<64x128xf32>,
                      %g: memref<4x128xbf16>, %u: memref<4x128xbf16>) {
  linalg.matmul ins(%x, %wg : memref<4x64xbf16>, memref<64x128xf32>) outs(%g : memref<4x128xbf16>)
  // expected-error@+1 {{'linalg.matmul' mixes element types; cuBLAS is called with one}}
  linalg.matmul ins(%x, %wu : memref<4x64xbf16>, memref<64x128xf32>) outs(%u : memref<4x128xbf16>)
  return
}

// -----

// A matmul prologue split over K (symm-mem-split-k): up to 128 rows the
// down projection is one strided batched GEMM over 2 slices of K into the
// f32 partials (row strides 7168, 4096, 4096; batch strides 3584,
// 3584 x 4096 and rows x 4096; bf16 in, f32 out, overwriting), and the
// kernel takes the partials after the vector count; above, the whole
// matmul into the all-reduce's input and the plain kernels.
// CHECK: gpu.func @symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_splitk2(%{{[^:]*}}: !symm_mem.pool, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[NVEC:[^:]*]]: i64, %[[PARTIALS:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
// The rank's vector: slice 0's and slice 1's (nvec vectors further) f32
// lanes, added in slice order and rounded once, then sent.
// CHECK: %[[FIRST:.*]] = llvm.getelementptr %[[PARTIALS]][%[[I:.*]]] : (!llvm.ptr, i64) -> !llvm.ptr, vector<8xf32>
// CHECK: %[[S0:.*]] = llvm.load %[[FIRST]] {alignment = 16 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %[[I]] : i64
// CHECK: %[[SECOND:.*]] = llvm.getelementptr %[[PARTIALS]][%[[AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, vector<8xf32>
// CHECK: %[[S1:.*]] = llvm.load %[[SECOND]] {alignment = 16 : i64} : !llvm.ptr -> vector<8xf32>
// CHECK: %[[SUM:.*]] = arith.addf %[[S0]], %[[S1]] : vector<8xf32>
// CHECK: arith.truncf %[[SUM]] : vector<8xf32> to vector<8xbf16>
// With lamport-send (symm-linalg-matmul-to-gpu's GEMVs may send the
// slices themselves) the split-K Lamport kernel is another one, `_sent`:
// SENT-LABEL: gpu.func @symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_splitk2_sent(
// SENT-SAME: %{{[^:]*}}: !symm_mem.pool, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[NVEC:[^:]*]]: i64, %[[PARTIALS:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr)
// The block's stamp: equal to its call counter + 1 where the generated
// matmul sent this call's slices itself (symm-linalg-matmul-to-gpu's
// lamport-send); then the block only receives.
// SENT: %[[COUNTER:.*]] = symm_mem.epoch %{{.*}} channel
// SENT: %[[NEXT:.*]] = arith.addi %[[COUNTER]], %{{.*}} : i32
// SENT: %[[STAMP:.*]] = symm_mem.epoch %{{.*}} channel
// SENT: %[[SENT:.*]] = arith.cmpi eq, %[[STAMP]], %[[NEXT]] : i32
// SENT: %[[FITS:.*]] = arith.cmpi ule
// SENT: %[[UNSENT:.*]] = arith.xori %[[SENT]], %{{.*}} : i1
// SENT: scf.if %[[UNSENT]] {
// Where both slices fit a region one after the other, each goes on its
// own, rounded on its own: slice 0 at the vector's place, slice 1 nvec
// vectors further.
// SENT: scf.if %[[FITS]] {
// SENT: %[[FIRST:.*]] = llvm.getelementptr %[[PARTIALS]][%[[I:.*]]] : (!llvm.ptr, i64) -> !llvm.ptr, vector<8xf32>
// SENT: %[[T0:.*]] = llvm.load %[[FIRST]] {alignment = 16 : i64} : !llvm.ptr -> vector<8xf32>
// SENT: arith.truncf %[[T0]] : vector<8xf32> to vector<8xbf16>
// SENT: %[[AT:.*]] = arith.addi %{{.*}}, %[[I]] : i64
// SENT: %[[SECOND:.*]] = llvm.getelementptr %[[PARTIALS]][%[[AT]]] : (!llvm.ptr, i64) -> !llvm.ptr, vector<8xf32>
// SENT: %[[T1:.*]] = llvm.load %[[SECOND]] {alignment = 16 : i64} : !llvm.ptr -> vector<8xf32>
// SENT: arith.truncf %[[T1]] : vector<8xf32> to vector<8xbf16>
// Else the rank's vector: slice 0's and slice 1's f32 lanes, added in
// slice order and rounded once, then sent.
// SENT: } else {
// SENT: %[[S0:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xf32>
// SENT: %[[S1:.*]] = llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xf32>
// SENT: %[[SUM:.*]] = arith.addf %[[S0]], %[[S1]] : vector<8xf32>
// SENT: arith.truncf %[[SUM]] : vector<8xf32> to vector<8xbf16>
// The sum: both ranks' two slices, in rank then slice order, or both
// ranks' sums.
// SENT: %[[SUMMED:.*]] = scf.if %[[FITS]] -> (vector<8xbf16>) {
// SENT-COUNT-4: symm_mem.lamport_wait
// SENT-COUNT-4: arith.extf
// SENT-COUNT-3: arith.addf
// SENT: } else {
// SENT-COUNT-2: symm_mem.lamport_wait
// The stamp goes back to the counter, which no later counter + 1 equals.
// SENT: symm_mem.set_epoch %{{.*}} channel %{{.*}} to %[[NEXT]]
// SENT: symm_mem.set_epoch %{{.*}} channel %{{.*}} to %[[COUNTER]]
// CHECK-LABEL: func.func @split_k_async
// CHECK: scf.if
// CHECK:   call @symm_rt_batch_matmul(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c2_i64{{[_0-9]*}}, %[[M:[^,]*]], %c4096_i64{{[_0-9]*}}, %c3584_i64{{[_0-9]*}}, %c7168_i64{{[_0-9]*}}, %c3584_i64{{[_0-9]*}}, %c4096_i64{{[_0-9]*}}, %c14680064_i64{{[_0-9]*}}, %c4096_i64{{[_0-9]*}}, %{{[^,]*}}, %c2_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK:   gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_splitk2 {{.*}} args(%{{.*}} : !symm_mem.pool, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr)
// The Lamport kernel takes all 128 rows (1 MiB); above them, the whole
// matmul and the plain kernels.
// CHECK: } else {
// CHECK:   scf.if
// CHECK:     call @symm_rt_matmul(
// CHECK:     gpu.launch_func @symm_kernels::@symm_two_shot_push_sum_bf16_w2_v8_symm_epilogue_0 
// CHECK:   } else {
// CHECK:     call @symm_rt_matmul(
// CHECK:     gpu.launch_func @symm_kernels::@symm_one_shot_sum_bf16_w2_v8_symm_epilogue_0 
// Without Lamport, the staged one-shot sums the slices into its own
// staging slot before the counters meet (peers read the slot after).
// STAGED-LABEL: gpu.func @symm_one_shot_staged_sum_bf16_w2_v8_symm_epilogue_0_splitk2(
// STAGED: %[[MINE:.*]] = symm_mem.staging_slot
// STAGED: scf.for
// STAGED: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xf32>
// STAGED: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xf32>
// STAGED: %[[SUM:.*]] = arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// STAGED: %[[OWN:.*]] = arith.truncf %[[SUM]] : vector<8xf32> to vector<8xbf16>
// STAGED: %[[AT:.*]] = llvm.getelementptr %[[MINE]]
// STAGED: llvm.store %[[OWN]], %[[AT]] {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr
// STAGED: symm_mem.add_counter
// STAGED: symm_mem.wait_counter
// Above the staging slots (512 KiB) to 128 rows, a barrier one-shot first
// stores the sums into its input, for its peers.
// STAGED: gpu.func @symm_one_shot_sum_bf16_w2_v8_symm_epilogue_0_splitk2(
// STAGED: scf.for
// STAGED: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// STAGED: arith.truncf
// STAGED: llvm.store
// STAGED: symm_mem.barrier
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
func.func @split_k(%act: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>, %x: memref<?x4096xbf16>, %out: memref<?x4096xbf16>) attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %n = memref.dim %act, %c0 : memref<?x7168xbf16>
  %room = arith.minui %n, %c128 : index
  %c8192 = arith.constant 8192 : index
  %elems = arith.muli %room, %c8192 : index
  %flat = memref.alloc(%elems) : memref<?xf32>
  %pool = symm_mem.get_global @pool : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
  %p = memref.view %pool[%c0][%n] : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>> to memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
  %q = memref.expand_shape %flat [[0, 1, 2]] output_shape [2, %room, 4096] : memref<?xf32> into memref<2x?x4096xf32>
  // expected-remark@+1 {{all_reduce of up to 2048 rows of 8192 bytes on 2 ranks, a kernel per size}}
  symm_mem.all_reduce_epilogue_out sum %p matmul(%act, %w : memref<?x7168xbf16>, memref<7168x4096xbf16>) split_k(%q : memref<2x?x4096xf32>) up to 128 rows epilogue(%x : memref<?x4096xbf16>) into %out group @tp algorithm auto {
  ^bb0(%s: bf16, %r: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    symm_mem.epilogue_yield %o : bf16
  } : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<?x4096xbf16>
  memref.dealloc %flat : memref<?xf32>
  return
}

// -----

// all_reduce_rows_out takes the same prologue (a down projection whose
// all-reduce the residual and the next layer's RMSNorm follow): up to 128
// rows the one-shot rows kernel (by default the Lamport one, up to 2 MiB on
// 2 ranks) sums the slices, taking the partials before the epilogue's
// operands; a rows kernel counts rows, so a slice is the rows times 512
// vectors. Above, the whole matmul and the plain kernels: the Lamport one
// up to 2 MiB (256 rows), the one between barriers above. With rows-lamport-max-bytes lower
// (ROWS256), each one-shot rows kernel sums them: Lamport up to 32 rows,
// staged up to 64, between barriers up to 128.
// CHECK: gpu.func @symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply_splitk2(%{{[^:]*}}: !symm_mem.pool, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[ROWS:[^:]*]]: i64, %[[PARTIALS:[^:]*]]: !llvm.ptr,
// CHECK: %[[SLICE:.*]] = arith.muli %[[ROWS]], %c512_i64{{[_0-9]*}} : i64
// CHECK: %[[FIRST:.*]] = llvm.getelementptr %[[PARTIALS]][%[[AT:.*]]] : (!llvm.ptr, i64) -> !llvm.ptr, vector<8xf32>
// CHECK: %[[OFFSET:.*]] = arith.muli %[[SLICE]], %c1_i64{{[_0-9]*}} : i64
// CHECK: %[[NEXT:.*]] = arith.addi %[[OFFSET]], %[[AT]] : i64
// CHECK: llvm.getelementptr %[[PARTIALS]][%[[NEXT]]] : (!llvm.ptr, i64) -> !llvm.ptr, vector<8xf32>
// CHECK: symm_mem.lamport_wait
// CHECK-LABEL: func.func @split_k_rows_async
// CHECK: call @symm_rt_batch_matmul(
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply_splitk2 {{.*}} args(%{{.*}} : !symm_mem.pool, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : f32)
// CHECK-NOT: symm_one_shot_staged_sum_bf16_w2_v8_symm_epilogue_0_rows
// CHECK: call @symm_rt_matmul(
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply 
// CHECK: call @symm_rt_matmul(
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply 
// ROWS256: gpu.func @symm_one_shot_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply_splitk2(
// ROWS256: scf.for
// ROWS256: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// ROWS256: arith.truncf
// ROWS256: llvm.store
// ROWS256: symm_mem.barrier
// ROWS256-LABEL: func.func @split_k_rows_async
// ROWS256: call @symm_rt_batch_matmul(
// ROWS256: gpu.launch_func @symm_kernels::@symm_one_shot_lamport_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply_splitk2
// ROWS256: call @symm_rt_batch_matmul(
// ROWS256: gpu.launch_func @symm_kernels::@symm_one_shot_staged_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply_splitk2
// ROWS256: call @symm_rt_batch_matmul(
// ROWS256: gpu.launch_func @symm_kernels::@symm_one_shot_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply_splitk2
// ROWS256: call @symm_rt_matmul(
// ROWS256: gpu.launch_func @symm_kernels::@symm_two_shot_push_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply 
// Between barriers, the sums go into the rank's input row by row first.
// STAGED-LABEL: gpu.func @symm_one_shot_staged_sum_bf16_w2_v8_symm_epilogue_0_rows_symm_epilogue_0_apply_splitk2(
// STAGED: %[[MINE:.*]] = symm_mem.staging_slot
// STAGED: arith.addf %{{.*}}, %{{.*}} : vector<8xf32>
// STAGED: %[[OWN:.*]] = arith.truncf %{{.*}} : vector<8xf32> to vector<8xbf16>
// STAGED: %[[AT:.*]] = llvm.getelementptr %[[MINE]]
// STAGED: llvm.store %[[OWN]], %[[AT]]
// STAGED: symm_mem.add_counter
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
func.func @split_k_rows(%act: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>, %x: memref<?x4096xbf16>, %gamma: memref<4096xbf16>, %h: memref<?x4096xbf16>, %normed: memref<?x4096xbf16>) attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %c128 = arith.constant 128 : index
  %n = memref.dim %act, %c0 : memref<?x7168xbf16>
  %room = arith.minui %n, %c128 : index
  %c8192 = arith.constant 8192 : index
  %elems = arith.muli %room, %c8192 : index
  %flat = memref.alloc(%elems) : memref<?xf32>
  %pool = symm_mem.get_global @pool : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>>
  %p = memref.view %pool[%c0][%n] : memref<16777216xi8, #symm_mem.allocator<symmetric, @tp>> to memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>
  %q = memref.expand_shape %flat [[0, 1, 2]] output_shape [2, %room, 4096] : memref<?xf32> into memref<2x?x4096xf32>
  // expected-remark@+1 {{all_reduce of up to 2048 rows of 8192 bytes on 2 ranks, a kernel per size}}
  symm_mem.all_reduce_rows_out sum %p matmul(%act, %w : memref<?x7168xbf16>, memref<7168x4096xbf16>) split_k(%q : memref<2x?x4096xf32>) up to 128 rows epilogue(%x : memref<?x4096xbf16>) into %h rows(%gamma : memref<4096xbf16>) into %normed init 0.0 group @tp algorithm auto {
  ^bb0(%s: bf16, %r: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    symm_mem.epilogue_yield %o : bf16
  } step {
  ^bb0(%e: bf16, %acc: f32):
    %f = arith.extf %e : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %t = arith.addf %sq, %acc : f32
    symm_mem.epilogue_yield %t : f32
  } apply {
  ^bb0(%e: bf16, %total: f32, %g: bf16):
    %mean = arith.constant 4096.0 : f32
    %m = arith.divf %total, %mean : f32
    %inv = math.rsqrt %m : f32
    %f = arith.extf %e : bf16 to f32
    %gf = arith.extf %g : bf16 to f32
    %y = arith.mulf %f, %inv : f32
    %z = arith.mulf %y, %gf : f32
    %o = arith.truncf %z : f32 to bf16
    symm_mem.epilogue_yield %o : bf16
  } : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<?x4096xbf16>, memref<?x4096xbf16>
  memref.dealloc %flat : memref<?xf32>
  return
}

// -----

// A batched matmul the user wrote (the parser gives it the default maps)
// is one cuBLAS strided batched GEMM: batch 2, m 4, n 16, k 8, row and
// batch strides 8/32, 16/128, 16/64, f32 in and out, accumulating, row-major
// (layout 0). One that reads its lhs transposed (a: batch x k x m) is one
// too, with a's rows of m = 4 (stride 4/32) and layout code 2
// (SYMM_TRANSPOSED_A); attention's scores, q k^T, read b transposed
// (b: batch x n x k, rows of k = 8: stride 8/128), layout code 1. One that
// broadcasts its lhs over the batch stays linalg, for the GPU loops.
// CHECK-LABEL: func.func @user_batch_matmul_async
// CHECK: call @symm_rt_batch_matmul(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c2_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c32_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}})
// CHECK-NOT: linalg.batch_matmul
// CHECK-LABEL: func.func @transposed_batch_matmul_async
// CHECK: call @symm_rt_batch_matmul(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c2_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c32_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %c2_i32{{[_0-9]*}})
// CHECK-NOT: linalg.batch_matmul
// CHECK-LABEL: func.func @scores_async
// CHECK: call @symm_rt_batch_matmul(%{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, %c2_i64{{[_0-9]*}}, %c4_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c32_i64{{[_0-9]*}}, %c8_i64{{[_0-9]*}}, %c128_i64{{[_0-9]*}}, %c16_i64{{[_0-9]*}}, %c64_i64{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c0_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}}, %c1_i32{{[_0-9]*}})
// CHECK-LABEL: func.func @broadcast_batch_matmul
// CHECK-NOT: symm_rt_batch_matmul
// CHECK: linalg.batch_matmul indexing_maps
func.func @user_batch_matmul(%a: memref<2x4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<2x4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}
func.func @transposed_batch_matmul(%a: memref<2x8x4xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d3, d1)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
    ins(%a, %b : memref<2x8x4xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}
func.func @scores(%q: memref<2x4x8xf32>, %k: memref<2x16x8xf32>, %s: memref<2x4x16xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
    ins(%q, %k : memref<2x4x8xf32>, memref<2x16x8xf32>) outs(%s : memref<2x4x16xf32>)
  return
}
func.func @broadcast_batch_matmul(%a: memref<4x8xf32>, %b: memref<2x8x16xf32>, %c: memref<2x4x16xf32>) {
  linalg.batch_matmul indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d1, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
    ins(%a, %b : memref<4x8xf32>, memref<2x8x16xf32>) outs(%c : memref<2x4x16xf32>)
  return
}

// -----

// An entry point that calls another: the callee becomes a C entry point
// taking the runtime handle, so the call is refused where it is written.
symm_mem.group @tp world_size(2)
func.func @inner(%x: memref<64xf32>, %out: memref<64xf32>) {
  memref.copy %x, %out : memref<64xf32> to memref<64xf32>
  return
}
func.func @outer(%x: memref<64xf32>, %out: memref<64xf32>) {
  // expected-error@+1 {{'func.call' calls the entry point @inner, which becomes a C entry point taking the runtime handle (and its asynchronous form the stream): entry points do not call each other}}
  func.call @inner(%x, %out) : (memref<64xf32>, memref<64xf32>) -> ()
  return
}

// -----

// Groups of two world sizes could never run in one world of processes.
symm_mem.group @tp world_size(2)
// expected-error@+1 {{'symm_mem.group' @tp4 has world size 4, but @tp has 2: the program runs in one world of processes (symm-launch -n), so its groups must have one world size}}
symm_mem.group @tp4 world_size(4)
func.func @two_worlds(%out: memref<64xf32>) {
  return
}

// -----

// Host code cannot dereference device pointers: a scalar or vector load or
// store outside any kernel, on an entry point's buffer, an allocation or a
// view of either, is refused at the op (it would fault at run time).
func.func @host_store(%x: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c16 = arith.constant 16 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.for %i = %c0 to %c16 step %c1 {
    // expected-error@+1 {{'memref.store' writes device memory from host code, which cannot dereference device pointers: compute it in a linalg op (it becomes a kernel) or in a gpu.launch, or keep the buffer in host memory (#cudagraph.host)}}
    memref.store %one, %x[%i] : memref<16xf32>
  }
  return
}

// -----

func.func @host_load(%out: memref<f32, #cudagraph.host>) {
  %c1 = arith.constant 1 : index
  %buffer = memref.alloc() : memref<4x8xf32>
  %row = memref.subview %buffer[1, 0] [1, 8] [1, 1] : memref<4x8xf32> to memref<8xf32, strided<[1], offset: 8>>
  // expected-error@+1 {{'vector.load' reads device memory from host code}}
  %v = vector.load %row[%c1] : memref<8xf32, strided<[1], offset: 8>>, vector<4xf32>
  %s = vector.extract %v[0] : f32 from vector<4xf32>
  memref.store %s, %out[] : memref<f32, #cudagraph.host>
  memref.dealloc %buffer : memref<4x8xf32>
  return
}

// -----

// Host buffers, the stack and device memory touched only by kernels are
// host code's to use.
// (The host buffer's argument is rebuilt over its pointer, without the
// memory space, like every entry-point memref.)
// CHECK-LABEL: func.func @host_memory_is_fine_async
// CHECK: memref.store %{{.*}}, %{{.*}}[%{{.*}}] : memref<16xf32>
// CHECK: %[[STACK:.*]] = memref.alloca() : memref<4xf32>
// CHECK: memref.store %{{.*}}, %[[STACK]][%{{.*}}] : memref<4xf32>
// CHECK: gpu.launch
func.func @host_memory_is_fine(%x: memref<16xf32, #cudagraph.host>, %d: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  memref.store %one, %x[%c0] : memref<16xf32, #cudagraph.host>
  %stack = memref.alloca() : memref<4xf32>
  memref.store %one, %stack[%c0] : memref<4xf32>
  gpu.launch blocks(%bx, %by, %bz) in (%gx = %c1, %gy = %c1, %gz = %c1)
             threads(%tx, %ty, %tz) in (%sx = %c1, %sy = %c1, %sz = %c1) {
    memref.store %one, %d[%tx] : memref<16xf32>
    gpu.terminator
  }
  return
}

// -----

// Sizes whose bytes no 64-bit count holds are refused at the op (the byte
// count used to wrap).
func.func @too_many_bytes(%x: memref<?x4611686018427387904xf32>, %y: memref<?x4611686018427387904xf32>)
    attributes {symm_mem.max_tokens = 64 : i64} {
  // expected-error@+1 {{'memref.copy' has more bytes than a 64-bit size holds (memref<?x4611686018427387904xf32>), which no device allocates}}
  memref.copy %x, %y : memref<?x4611686018427387904xf32> to memref<?x4611686018427387904xf32>
  return
}

// -----

func.func @too_many_bytes_static(%x: memref<4611686018427387904x4xf32>) {
  // expected-error@+1 {{'memref.alloc' has more bytes than a 64-bit size holds (memref<4611686018427387904x4xf32>), which no device allocates}}
  %a = memref.alloc() : memref<4611686018427387904x4xf32>
  // expected-error@+1 {{'memref.copy' has more bytes than a 64-bit size holds}}
  memref.copy %x, %a : memref<4611686018427387904x4xf32> to memref<4611686018427387904x4xf32>
  memref.dealloc %a : memref<4611686018427387904x4xf32>
  return
}

// -----

// A measured choice: its rounds ask the runtime, passing the site whose
// generated GEMV may run just before (`after_gemv(3)`: site 3), else 0.
// CHECK-LABEL: func.func @measured
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr
// CHECK: call @symm_rt_kernel_rounds(%[[RT]], %{{.*}}, %{{.*}}, %c16_i64{{[_0-9]*}}, %c0_i64{{[_0-9]*}}) : (!llvm.ptr, i64, i64, i64, i64) -> i64
// CHECK: call @symm_rt_kernel_rounds(%[[RT]], %{{.*}}, %{{.*}}, %c16_i64{{[_0-9]*}}, %c3_i64{{[_0-9]*}}) : (!llvm.ptr, i64, i64, i64, i64) -> i64
func.func @measured(%m: index) -> (index, index) {
  %first = symm_mem.kernel_rounds site(3) rows(%m) max_rows(16)
  %after = symm_mem.kernel_rounds site(4) rows(%m) max_rows(16) after_gemv(3)
  return %first, %after : index, index
}

// -----

// A TMA descriptor asks the runtime with the matrix's address, rows,
// columns, row stride and box: a stack of split-K slices that follow each
// other as one matrix of all their rows, a stack with a gap between its
// slices as no rows (the runtime then has none, and the kernel's caller
// takes another way).
// CHECK-LABEL: func.func @tensor_maps
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr
// CHECK: memref.subview
// CHECK: %[[ROWS:.*]] = arith.constant 4096 : i64
// CHECK: %[[W:.*]] = llvm.inttoptr
// CHECK: %[[COLUMNS:.*]] = arith.constant 7168 : i64
// CHECK: %[[STRIDE:.*]] = arith.constant 7168 : i64
// CHECK: %[[BOX_ROWS:.*]] = arith.constant 64 : i64
// CHECK: %[[BOX_COLUMNS:.*]] = arith.constant 64 : i64
// CHECK: call @symm_rt_tensor_map(%[[RT]], %[[W]], %[[ROWS]], %[[COLUMNS]], %[[STRIDE]], %[[BOX_ROWS]], %[[BOX_COLUMNS]]) : (!llvm.ptr, !llvm.ptr, i64, i64, i64, i64, i64) -> i64
// CHECK: %[[SLICES:.*]] = arith.constant 2 : i64
// CHECK: %[[SLICE_ROWS:.*]] = arith.constant 3584 : i64
// CHECK: %[[STACKED:.*]] = arith.muli %[[SLICES]], %[[SLICE_ROWS]] : i64
// CHECK: call @symm_rt_tensor_map(%[[RT]], %{{.*}}, %[[STACKED]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[NONE:.*]] = arith.constant 0 : i64
// CHECK: call @symm_rt_tensor_map(%[[RT]], %{{.*}}, %[[NONE]], %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
func.func @tensor_maps(%w: memref<4096x7168xbf16>, %slices: memref<2x3584x4096xbf16>,
                       %big: memref<2x4096x4096xbf16>) -> (i64, i64, i64) {
  %gapped = memref.subview %big[0, 0, 0] [2, 3584, 4096] [1, 1, 1]
      : memref<2x4096x4096xbf16> to memref<2x3584x4096xbf16, strided<[16777216, 4096, 1]>>
  %d = symm_mem.tensor_map %w box(64 x 64) : memref<4096x7168xbf16>
  %s = symm_mem.tensor_map %slices box(128 x 64) : memref<2x3584x4096xbf16>
  %g = symm_mem.tensor_map %gapped box(128 x 64) : memref<2x3584x4096xbf16, strided<[16777216, 4096, 1]>>
  return %d, %s, %g : i64, i64, i64
}

// -----

// A descriptor of a view at an offset (the second half of a weight's rows)
// starts at the view's first element: the buffer's address plus the
// offset's bytes (2048 x 7168 bf16).
// CHECK-LABEL: func.func @tensor_map_at_offset
// CHECK: %[[BASE:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<2048x7168xbf16, strided<[7168, 1], offset: 14680064>> -> index
// CHECK-NEXT: %[[BASE64:.*]] = arith.index_cast %[[BASE]] : index to i64
// CHECK-NEXT: %[[SHIFT:.*]] = arith.constant 29360128 : i64
// CHECK-NEXT: %[[FIRST:.*]] = arith.addi %[[BASE64]], %[[SHIFT]] : i64
// CHECK-NEXT: %[[PTR:.*]] = llvm.inttoptr %[[FIRST]] : i64 to !llvm.ptr
// CHECK: call @symm_rt_tensor_map(%{{[^,]*}}, %[[PTR]],
func.func @tensor_map_at_offset(%w: memref<4096x7168xbf16>) -> i64 {
  %half = memref.subview %w[2048, 0] [2048, 7168] [1, 1]
      : memref<4096x7168xbf16> to memref<2048x7168xbf16, strided<[7168, 1], offset: 14680064>>
  %d = symm_mem.tensor_map %half box(64 x 64) : memref<2048x7168xbf16, strided<[7168, 1], offset: 14680064>>
  return %d : i64
}

// -----

// A module whose generated matmuls' grids were balanced over 114 SMs
// (symm-linalg-matmul-to-gpu{wave-sms=114} marks it symm.gemv_sms): each
// entry point hands the count to the runtime after the world's check, and
// the runtime logs a GPU of another count once.
module attributes {symm.gemv_sms = 114 : i64} {
  symm_mem.group @tp world_size(2)
  symm_mem.global @sms_pool alignment(128) : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
  // CHECK-LABEL: func.func @sms_async
  // CHECK: call @symm_rt_check_world(%[[RT:[^,]*]], %{{.*}}) : (!llvm.ptr, i64) -> ()
  // CHECK-NEXT: %[[SMS:.*]] = arith.constant 114 : i64
  // CHECK-NEXT: call @symm_rt_check_sms(%[[RT]], %[[SMS]]) : (!llvm.ptr, i64) -> ()
  // CHECK-LABEL: func.func @sms(
  func.func @sms(%out: memref<32x32xf32>) {
    %pool = symm_mem.get_global @sms_pool : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
    %c0 = arith.constant 0 : index
    %in = memref.view %pool[%c0][] : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>> to memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>
    symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>, memref<32x32xf32>
    return
  }
}
