// RUN: symm-opt %s -split-input-file -verify-diagnostics --cudagraph-partition --cudagraph-hoist-allocs --symm-mem-expand-collectives --convert-symm-mem-to-runtime | FileCheck %s
// RUN: not symm-opt %s -split-input-file --cudagraph-partition --cudagraph-hoist-allocs --symm-mem-expand-collectives --convert-symm-mem-to-runtime=cuda-graphs=false 2>/dev/null \
// RUN:   | FileCheck %s --check-prefix=NOGRAPH

// cudagraph.launch, lowered: a function capturable as a whole is one
// partition, whose body runs in place under `scf.if symm_rt_graph_begin`.
// The runtime runs it, captures it on the second call with the same key
// (the launch's inputs: here the output's address) and replays the graph
// after, skipping the body. A private marker global is the launch's
// identity. The pool (a symmetric global) is an address of its own, looked
// up before the graph: never a graph's memory.
symm_mem.group @tp world_size(2)
symm_mem.global @pool alignment(128) : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
// CHECK: memref.global "private" @[[$MARK:__symm_graph_graphed]] : memref<1xi8> = uninitialized
// CHECK-LABEL: func.func @graphed_async
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[OUT:[^:]*]]: !llvm.ptr)
// CHECK: %[[MARK:.*]] = memref.get_global @[[$MARK]] : memref<1xi8>
// CHECK: %[[KEY:.*]] = memref.alloca() : memref<1xi64>
// CHECK: memref.store %{{.*}}, %[[KEY]][%{{.*}}] : memref<1xi64>
// CHECK: %[[GO:.*]] = call @symm_rt_graph_begin(%[[RT]], %[[MARK_PTR:.*]], %{{.*}}, %{{.*}}) : (!llvm.ptr, !llvm.ptr, !llvm.ptr, i64) -> i32
// CHECK: call @symm_rt_global(
// CHECK: %[[BODY:.*]] = arith.cmpi ne, %[[GO]], %{{.*}} : i32
// CHECK: scf.if %[[BODY]] {
// CHECK: gpu.launch_func @symm_kernels::@symm_one_shot_staged_sum_f32_w2_v4
// CHECK: func.call @symm_rt_graph_end(%[[RT]], %[[MARK_PTR]])
// CHECK-NEXT: }
// CHECK-NEXT: %[[STATUS:.*]] = call @symm_rt_exit_async(%[[RT]])
// CHECK-NEXT: return %[[STATUS]]
// NOGRAPH-LABEL: func.func @graphed_async
// NOGRAPH-NOT: symm_rt_graph_begin
// NOGRAPH: gpu.launch_func
// NOGRAPH-NOT: scf.if
// NOGRAPH: call @symm_rt_exit_async
// expected-remark@+1 {{@graphed is capturable as a whole: one CUDA-graph partition}}
func.func @graphed(%out: memref<32x32xf32>) {
  %pool = symm_mem.get_global @pool : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>>
  %c0 = arith.constant 0 : index
  %in = memref.view %pool[%c0][] : memref<4096xi8, #symm_mem.allocator<symmetric, @tp>> to memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %in into %out group @tp algorithm one_shot : memref<32x32xf32, #symm_mem.allocator<symmetric, @tp>>, memref<32x32xf32>
  return
}

// -----

// Seed 001: a partition, a fallback region (a device-to-host copy the host
// reads, then a host-to-device copy back), another partition. Each
// partition's allocations are buffers of its key (symm_rt_graph_buffer:
// made once, the same address on every replay): the copy's destination,
// hoisted into partition 0, included. Nobody frees them. The host waits
// for the copy before its step. The function's result, a buffer of
// partition 1, goes back as a fresh copy.
func.func private @on_host(memref<16xf32, #cudagraph.host>)
// CHECK-LABEL: func.func @roundtrip
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr, %[[X:[^:]*]]: !llvm.ptr, %[[W:[^:]*]]: !llvm.ptr, %[[H:[^:]*]]: !llvm.ptr) -> !llvm.ptr
// Each buffer argument must start on a 16-byte boundary.
// CHECK: call @symm_rt_check_aligned(%[[RT]], %[[X]], %c0_i64{{[_0-9]*}}, %[[SIXTEEN:c16_i64[_0-9]*]])
// CHECK: call @symm_rt_check_aligned(%[[RT]], %[[W]], %c1_i64{{[_0-9]*}}, %{{c16_i64[_0-9]*}})
// CHECK: call @symm_rt_check_aligned(%[[RT]], %[[H]], %c2_i64{{[_0-9]*}}, %{{c16_i64[_0-9]*}})
// CHECK: %[[GO0:.*]] = call @symm_rt_graph_begin(%[[RT]], %[[M0:[^,]*]], %{{.*}}, %c2_i64{{[_0-9]*}})
// CHECK: call @symm_rt_graph_buffer(%[[RT]], %{{.*}}, %c0_i64{{.*}}, %c64_i64{{.*}})
// CHECK: call @symm_rt_graph_buffer(%[[RT]], %{{.*}}, %c1_i64{{.*}}, %c64_i64{{.*}})
// CHECK: scf.if
// CHECK: linalg.add
// CHECK: call @symm_rt_graph_end(%[[RT]], %[[M0]])
// CHECK: }
// CHECK: call @symm_rt_copy(%[[RT]],
// CHECK-NEXT: call @symm_rt_host_wait(%[[RT]])
// CHECK: call @on_host(
// CHECK: call @symm_rt_copy(%[[RT]],
// CHECK-NOT: symm_rt_host_wait
// CHECK: call @symm_rt_graph_begin(%[[RT]], %[[M1:[^,]*]], %{{.*}}, %c2_i64
// CHECK: %[[B1:.*]] = call @symm_rt_graph_buffer(%[[RT]], %{{.*}}, %c0_i64{{.*}}, %c64_i64{{.*}})
// CHECK: scf.if
// CHECK: linalg.add
// CHECK: call @symm_rt_graph_end(%[[RT]], %[[M1]])
// CHECK: %[[FRESH:.*]] = call @symm_rt_alloc(%[[RT]], %c64_i64{{.*}})
// CHECK: call @symm_rt_copy(%[[RT]]
// CHECK-NOT: symm_rt_free
// CHECK: call @symm_rt_exit(%[[RT]])
// NOGRAPH-LABEL: func.func @roundtrip
// NOGRAPH-NOT: symm_rt_graph
// NOGRAPH: call @symm_rt_alloc
// NOGRAPH: return
// expected-remark@+1 {{@roundtrip runs 2 CUDA-graph partitions}}
func.func @roundtrip(%x: memref<16xf32>, %w: memref<16xf32>, %h: memref<16xf32, #cudagraph.host>) -> memref<16xf32> {
  %a = memref.alloc() : memref<16xf32>
  linalg.add ins(%x, %w : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory}}
  memref.copy %a, %h : memref<16xf32> to memref<16xf32, #cudagraph.host>
  // expected-remark@below {{runs outside CUDA graphs: 'func.call' touches host memory}}
  func.call @on_host(%h) : (memref<16xf32, #cudagraph.host>) -> ()
  // expected-remark@below {{allocation moved into partition @roundtrip_partition_0 as output #1}}
  %d = memref.alloc() : memref<16xf32>
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory}}
  memref.copy %h, %d : memref<16xf32, #cudagraph.host> to memref<16xf32>
  %o = memref.alloc() : memref<16xf32>
  linalg.add ins(%d, %w : memref<16xf32>, memref<16xf32>) outs(%o : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  memref.dealloc %d : memref<16xf32>
  return %o : memref<16xf32>
}

// -----

// The key holds scalars by value (an index as i64, a float by its bits:
// a graph per value) and dynamic memrefs by address and rows (a graph per
// token count), so the allocation sized by them is the key's own too.
// CHECK-LABEL: func.func @scalars_async
// CHECK-SAME: (%[[RT:[^:]*]]: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %[[N:[^:]*]]: index, %{{[^:]*}}: !llvm.ptr, %[[S:[^:]*]]: f32)
// CHECK-DAG: %[[ROWS:.*]] = memref.dim %{{.*}}, %{{.*}} : memref<?x64xf32>
// CHECK-DAG: %[[BITS:.*]] = arith.bitcast %[[S]] : f32 to i32
// CHECK-DAG: %[[WIDE:.*]] = arith.extui %[[BITS]] : i32 to i64
// CHECK: %[[KEY:.*]] = memref.alloca() : memref<3xi64>
// CHECK: memref.store %[[WIDE]], %[[KEY]]
// CHECK: call @symm_rt_graph_begin(%[[RT]], %{{.*}}, %{{.*}}, %c3_i64)
// CHECK: call @symm_rt_graph_buffer(%[[RT]], %{{.*}}, %c0_i64{{.*}}, %{{.*}})
// CHECK: scf.if
// CHECK: linalg.generic
#id = affine_map<(d0, d1) -> (d0, d1)>
// expected-remark@+1 {{@scalars runs 1 CUDA-graph partition}}
func.func @scalars(%x: memref<?x64xf32>, %scale: f32) attributes {symm_mem.max_tokens = 64 : i64} {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x64xf32>
  %t = memref.alloc(%rows) : memref<?x64xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x64xf32>) outs(%t : memref<?x64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.mulf %v, %scale : f32
    linalg.yield %r : f32
  }
  memref.copy %t, %x : memref<?x64xf32> to memref<?x64xf32>
  memref.dealloc %t : memref<?x64xf32>
  return
}

// -----

// A result the work computes on the host (a capturable call's) could not
// come back from a replay: that partition runs eagerly, and says why.
func.func private @make(memref<16xf32>) -> memref<16xf32> attributes {cudagraph.capturable}
func.func private @log()
// CHECK-LABEL: func.func @computed_result
// CHECK-NOT: symm_rt_graph_begin
// CHECK: call @make
// CHECK: call @log
// expected-remark@+1 {{@computed_result runs 1 CUDA-graph partition}}
func.func @computed_result(%x: memref<16xf32>) -> memref<16xf32> {
  // expected-remark@below {{partition @computed_result_partition_0 runs eagerly, without a CUDA graph: result #0 is computed by 'func.call', which a replay would skip}}
  %a = memref.alloc() : memref<16xf32>
  linalg.add ins(%x, %x : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  %r = func.call @make(%a) : (memref<16xf32>) -> memref<16xf32>
  // expected-remark@below {{runs outside CUDA graphs: it calls @log, which is not marked cudagraph.capturable}}
  func.call @log() : () -> ()
  return %r : memref<16xf32>
}

// -----

// Host buffers come from the application: compiled code does not allocate
// them.
func.func private @on_host(memref<16xf32, #cudagraph.host>)
func.func @host_alloc(%x: memref<16xf32>) {
  // expected-remark@below {{runs outside CUDA graphs: 'memref.alloc' touches host memory}}
  // expected-error@below {{'memref.alloc' allocates host memory (#cudagraph.host), which compiled code does not: let the application allocate it (pinned, cudaHostAlloc) and pass it in as an argument}}
  %h = memref.alloc() : memref<16xf32, #cudagraph.host>
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory}}
  memref.copy %x, %h : memref<16xf32> to memref<16xf32, #cudagraph.host>
  // expected-remark@below {{runs outside CUDA graphs: 'func.call' touches host memory}}
  func.call @on_host(%h) : (memref<16xf32, #cudagraph.host>) -> ()
  return
}

// -----

// A launch of a partition this module does not define.
func.func private @elsewhere(memref<16xf32>) attributes {cudagraph.partition = 0 : i64}
func.func @declared(%x: memref<16xf32>) {
  // expected-remark@below {{runs outside CUDA graphs: 'cudagraph.launch' runs a partition, a graph of its own}}
  // expected-error@below {{'cudagraph.launch' runs @elsewhere, which is not a function with a body in this module}}
  cudagraph.launch @elsewhere(%x) : (memref<16xf32>) -> ()
  return
}
