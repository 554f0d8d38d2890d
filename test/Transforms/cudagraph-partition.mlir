// RUN: symm-opt %s -split-input-file -verify-diagnostics --cudagraph-partition | FileCheck %s

// Everything capturable: the special case of one partition, the whole
// body; the function is marked capturable for its callers too.
// CHECK-LABEL: func.func @all_capturable
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>, %[[W:.*]]: memref<16xf32>) -> memref<16xf32> attributes {cudagraph.capturable}
// CHECK-NEXT: %[[R:.*]] = cudagraph.launch @[[$F:all_capturable_partition_0]](%[[X]], %[[W]])
// CHECK-NEXT: return %[[R]]
// CHECK: func.func private @[[$F]]({{.*}}) -> memref<16xf32> attributes {cudagraph.partition = 0 : i64}
// CHECK-NEXT: %[[A:.*]] = memref.alloc()
// CHECK-NEXT: linalg.add ins(%{{.*}}, %{{.*}} : {{.*}}) outs(%[[A]] : memref<16xf32>)
// CHECK-NEXT: return %[[A]]
// expected-remark@+1 {{cudagraph-partition: @all_capturable is capturable as a whole: one CUDA-graph partition}}
func.func @all_capturable(%x: memref<16xf32>, %w: memref<16xf32>) -> memref<16xf32> {
  %a = memref.alloc() : memref<16xf32>
  linalg.add ins(%x, %w : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  return %a : memref<16xf32>
}

// -----

// Fallback regions between partitions keep their order. Each partition's
// signature lists what it reads (arguments) and what later code reads
// (results); constants are cloned rather than passed.
func.func private @host_callback(memref<16xf32, #cudagraph.host>)
func.func private @kernel(memref<16xf32>) attributes {cudagraph.capturable}
func.func private @sample(index) -> index
// CHECK-LABEL: func.func @ordered
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>, %[[W:.*]]: memref<16xf32>, %[[H:.*]]: memref<16xf32, #cudagraph.host>, %[[N:.*]]: index)
// CHECK: %[[P0:.*]] = cudagraph.launch @[[$F0:ordered_partition_0]](%[[X]], %[[W]]) : (memref<16xf32>, memref<16xf32>) -> memref<16xf32>
// CHECK-NEXT: memref.copy %[[P0]], %[[H]]
// CHECK-NEXT: call @host_callback(%[[H]])
// CHECK-NEXT: %[[P1:.*]] = cudagraph.launch @[[$F1:ordered_partition_1]](%[[P0]], %[[W]]) : (memref<16xf32>, memref<16xf32>) -> memref<16xf32>
// CHECK-NEXT: %[[T:.*]] = call @sample(%[[N]]) : (index) -> index
// CHECK-NEXT: %[[P2:.*]]:2 = cudagraph.launch @[[$F2:ordered_partition_2]](%[[T]], %[[P1]]) : (index, memref<16xf32>) -> (memref<?xf32>, memref<16xf32>)
// CHECK-NEXT: return %[[P2]]#1, %[[P2]]#0
// CHECK: func.func private @[[$F0]](%[[A0:.*]]: memref<16xf32>, %[[A1:.*]]: memref<16xf32>) -> memref<16xf32> attributes {cudagraph.partition = 0 : i64}
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: linalg.add ins(%[[A0]], %[[A1]] : {{.*}}) outs(%[[B]] : memref<16xf32>)
// CHECK-NEXT: return %[[B]]
// CHECK: func.func private @[[$F1]]({{.*}}) -> memref<16xf32> attributes {cudagraph.partition = 1 : i64}
// CHECK: linalg.mul
// CHECK: func.func private @[[$F2]](%[[TOKENS:.*]]: index, %{{.*}}: memref<16xf32>) -> (memref<?xf32>, memref<16xf32>) attributes {cudagraph.partition = 2 : i64}
// CHECK-NEXT: %[[C:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: memref.alloc(%[[TOKENS]]) : memref<?xf32>
// CHECK: linalg.fill ins(%[[C]] : f32)
// CHECK: call @kernel
// expected-remark@+1 {{cudagraph-partition: @ordered runs 3 CUDA-graph partitions between fallback regions}}
func.func @ordered(%x: memref<16xf32>, %w: memref<16xf32>, %h: memref<16xf32, #cudagraph.host>, %n: index) -> (memref<16xf32>, memref<?xf32>) {
  %zero = arith.constant 0.0 : f32
  %a = memref.alloc() : memref<16xf32>
  linalg.add ins(%x, %w : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory (#cudagraph.host)}}
  memref.copy %a, %h : memref<16xf32> to memref<16xf32, #cudagraph.host>
  // expected-remark@below {{runs outside CUDA graphs: 'func.call' touches host memory (#cudagraph.host)}}
  func.call @host_callback(%h) : (memref<16xf32, #cudagraph.host>) -> ()
  %b = memref.alloc() : memref<16xf32>
  linalg.mul ins(%a, %w : memref<16xf32>, memref<16xf32>) outs(%b : memref<16xf32>)
  // A host step: its result sizes the next partition's allocation, so it
  // is one of that partition's inputs (its key).
  // expected-remark@below {{runs outside CUDA graphs: it calls @sample, which is not marked cudagraph.capturable}}
  %t = func.call @sample(%n) : (index) -> index
  %d = memref.alloc(%t) : memref<?xf32>
  %c = memref.alloc() : memref<16xf32>
  linalg.fill ins(%zero : f32) outs(%c : memref<16xf32>)
  linalg.add ins(%b, %c : memref<16xf32>, memref<16xf32>) outs(%c : memref<16xf32>)
  func.call @kernel(%c) : (memref<16xf32>) -> ()
  return %c, %d : memref<16xf32>, memref<?xf32>
}

// -----

// P2P inputs (seed 000 with CUDA graphs): the persistent symmetric buffer
// is a module global, allocated once at initialization and in no
// partition; its DMA copy and the collective sit inside partition 0; the
// outer function has no copy of its own.
// CHECK: symm_mem.global @[[$G:__symm_input_p2p_arg0]] : memref<4x4xf32, #symm_tp>
// CHECK-NOT: symm_mem.global
// CHECK-LABEL: func.func @p2p
// CHECK-NOT: memref.copy
// CHECK: cudagraph.launch @p2p_partition_0(%arg0, %arg1)
// CHECK-NOT: memref.copy
// CHECK: return
// CHECK: func.func private @p2p_partition_0
// CHECK: %[[BUF:.*]] = symm_mem.get_global @[[$G]]
// CHECK-NEXT: memref.copy %arg0, %[[BUF]]
// CHECK: symm_mem.all_reduce_out sum %[[BUF]] {{.*}} algorithm one_shot
// CHECK-NOT: memref.copy
symm_mem.group @tp world_size(2)
symm_mem.global @__symm_input_p2p_arg0 : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>
// expected-remark@+1 {{@p2p is capturable as a whole: one CUDA-graph partition}}
func.func @p2p(%x: memref<4x4xf32>, %n: index) -> (memref<4x4xf32>, memref<?xf32>) {
  %0 = symm_mem.get_global @__symm_input_p2p_arg0 : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>
  memref.copy %x, %0 : memref<4x4xf32> to memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>
  %out = memref.alloc() : memref<4x4xf32>
  symm_mem.all_reduce_out sum %0 into %out group @tp algorithm one_shot : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>, memref<4x4xf32>
  %d = memref.alloc(%n) : memref<?xf32>
  return %out, %d : memref<4x4xf32>, memref<?xf32>
}

// -----

// Unsupported: control flow across blocks is not partitioned.
// expected-warning@+1 {{cudagraph-partition: @branches has 2 blocks; only single-block functions are partitioned, so it runs without CUDA graphs}}
func.func @branches(%x: memref<4xf32>) {
  cf.br ^next
^next:
  return
}

// -----

// A symmetric buffer that reaches a partition as an input (here a per-call
// symm_mem.alloc, which cannot be captured) is marked so that the runtime
// never copies it into the graph's pool.
// CHECK-LABEL: func.func @p2p_argument
// CHECK: %[[S:.*]] = symm_mem.alloc(%{{.*}})
// CHECK: cudagraph.launch @p2p_argument_partition_0(%{{.*}}, %[[S]])
// CHECK: func.func private @p2p_argument_partition_0(%{{.*}}: memref<?xf32>, %{{.*}}: memref<?xf32, #symm_tp> {cudagraph.p2p})
symm_mem.group @tp world_size(2)
// expected-remark@+1 {{runs 1 CUDA-graph partition}}
func.func @p2p_argument(%x: memref<?xf32>, %n: index) -> memref<?xf32> {
  // expected-remark@below {{runs outside CUDA graphs: 'symm_mem.alloc' allocates collectively, a rendezvous with every peer}}
  %s = symm_mem.alloc(%n) : memref<?xf32, #symm_mem.allocator<symmetric, @tp>>
  memref.copy %x, %s : memref<?xf32> to memref<?xf32, #symm_mem.allocator<symmetric, @tp>>
  symm_mem.all_reduce_out sum %s into %x group @tp : memref<?xf32, #symm_mem.allocator<symmetric, @tp>>, memref<?xf32>
  return %x : memref<?xf32>
}

// -----

// A free does not split a capturable run: it moves down to the next op
// that stays outside (here the host copy), and the run is one partition.
func.func private @read_on_host(memref<16xf32, #cudagraph.host>)
// CHECK-LABEL: func.func @free_in_the_middle
// CHECK: %[[P:.*]]:2 = cudagraph.launch @[[$F:free_in_the_middle_partition_0]](%{{.*}}, %{{.*}}) : (memref<16xf32>, memref<16xf32>) -> (memref<16xf32>, memref<16xf32>)
// CHECK-NEXT: memref.dealloc %[[P]]#0 : memref<16xf32>
// CHECK-NEXT: memref.copy %[[P]]#1, %{{.*}} : memref<16xf32> to memref<16xf32, #cudagraph.host>
// CHECK-NEXT: call @read_on_host
// CHECK-NOT: cudagraph.launch
// CHECK: func.func private @[[$F]]
// CHECK: linalg.add
// CHECK: linalg.mul
// CHECK-NOT: memref.dealloc
// CHECK: return
// expected-remark@+1 {{runs 1 CUDA-graph partition}}
func.func @free_in_the_middle(%x: memref<16xf32>, %w: memref<16xf32>, %h: memref<16xf32, #cudagraph.host>) {
  %a = memref.alloc() : memref<16xf32>
  linalg.add ins(%x, %w : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  %b = memref.alloc() : memref<16xf32>
  linalg.mul ins(%a, %w : memref<16xf32>, memref<16xf32>) outs(%b : memref<16xf32>)
  memref.dealloc %a : memref<16xf32>
  %c = memref.alloc() : memref<16xf32>
  linalg.add ins(%b, %w : memref<16xf32>, memref<16xf32>) outs(%c : memref<16xf32>)
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory (#cudagraph.host)}}
  memref.copy %c, %h : memref<16xf32> to memref<16xf32, #cudagraph.host>
  // expected-remark@below {{runs outside CUDA graphs: 'func.call' touches host memory (#cudagraph.host)}}
  func.call @read_on_host(%h) : (memref<16xf32, #cudagraph.host>) -> ()
  return
}

// -----

// A constant the function returns from a partition is cloned into it and
// returned by the launch (the partition must not read the function's).
// CHECK-LABEL: func.func @returns_a_constant
// CHECK: %[[R:.*]] = cudagraph.launch @returns_a_constant_partition_0(%{{.*}}, %{{.*}}) : (memref<16xf32>, memref<16xf32>) -> index
// CHECK-NEXT: return %[[R]] : index
// CHECK-LABEL: func.func private @returns_a_constant_partition_0
// CHECK-NEXT: %[[C:.*]] = arith.constant 7 : index
// CHECK-NEXT: linalg.add
// CHECK-NEXT: return %[[C]] : index
// expected-remark@+1 {{cudagraph-partition: @returns_a_constant is capturable as a whole: one CUDA-graph partition}}
func.func @returns_a_constant(%x: memref<16xf32>, %a: memref<16xf32>) -> index {
  %c7 = arith.constant 7 : index
  linalg.add ins(%x, %x : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  return %c7 : index
}
