// RUN: symm-opt %s -split-input-file -verify-diagnostics --cudagraph-partition --cudagraph-hoist-allocs | FileCheck %s

// Seed 001 [4/5]: a cpu<->cuda round trip. The device copy's destination,
// allocated in the fallback region, moves into the prior partition as an
// extra output, so the graph allocates it once and replays it in place.
func.func private @on_host(memref<16xf32, #cudagraph.host>)
// CHECK-LABEL: func.func @roundtrip
// CHECK-SAME: (%[[X:.*]]: memref<16xf32>, %[[W:.*]]: memref<16xf32>)
// CHECK: %[[P0:.*]]:2 = cudagraph.launch @[[$F0:roundtrip_partition_0]](%[[X]], %[[W]]) : (memref<16xf32>, memref<16xf32>) -> (memref<16xf32>, memref<16xf32>)
// CHECK-NEXT: %[[H:.*]] = memref.alloc() : memref<16xf32, #cudagraph.host>
// CHECK-NEXT: memref.copy %[[P0]]#0, %[[H]]
// CHECK-NEXT: call @on_host(%[[H]])
// CHECK-NEXT: memref.copy %[[H]], %[[P0]]#1 : memref<16xf32, #cudagraph.host> to memref<16xf32>
// CHECK-NEXT: %[[P1:.*]] = cudagraph.launch @roundtrip_partition_1(%[[P0]]#1, %[[W]])
// CHECK-NOT: memref.alloc() : memref<16xf32>{{$}}
// CHECK: return %[[P1]]
// CHECK: func.func private @[[$F0]]({{.*}}) -> (memref<16xf32>, memref<16xf32>) attributes {cudagraph.hoisted = array<i64: 1>, cudagraph.partition = 0 : i64}
// CHECK: %[[A:.*]] = memref.alloc() : memref<16xf32>
// CHECK: linalg.add
// CHECK: %[[HOISTED:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: return %[[A]], %[[HOISTED]]
// expected-remark@+1 {{runs 2 CUDA-graph partitions}}
func.func @roundtrip(%x: memref<16xf32>, %w: memref<16xf32>) -> memref<16xf32> {
  %a = memref.alloc() : memref<16xf32>
  linalg.add ins(%x, %w : memref<16xf32>, memref<16xf32>) outs(%a : memref<16xf32>)
  // expected-remark@below {{runs outside CUDA graphs: 'memref.alloc' touches host memory (#cudagraph.host)}}
  %h = memref.alloc() : memref<16xf32, #cudagraph.host>
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory (#cudagraph.host)}}
  memref.copy %a, %h : memref<16xf32> to memref<16xf32, #cudagraph.host>
  // expected-remark@below {{runs outside CUDA graphs: 'func.call' touches host memory (#cudagraph.host)}}
  func.call @on_host(%h) : (memref<16xf32, #cudagraph.host>) -> ()
  // expected-remark@+1 {{cudagraph-hoist-allocs: allocation moved into partition @roundtrip_partition_0 as output #1: allocated once at capture, same address on every replay}}
  %d = memref.alloc() : memref<16xf32>
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory (#cudagraph.host)}}
  memref.copy %h, %d : memref<16xf32, #cudagraph.host> to memref<16xf32>
  %o = memref.alloc() : memref<16xf32>
  linalg.add ins(%d, %w : memref<16xf32>, memref<16xf32>) outs(%o : memref<16xf32>)
  return %o : memref<16xf32>
}

// -----

// Before the first partition there is nowhere to hoist to; host buffers
// are never hoisted.
func.func private @fill_on_host(memref<16xf32, #cudagraph.host>)
// CHECK-LABEL: func.func @nothing_before
// CHECK-NEXT: %[[H:.*]] = memref.alloc() : memref<16xf32, #cudagraph.host>
// CHECK-NEXT: call @fill_on_host(%[[H]])
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: memref.copy %[[H]], %[[D]]
// CHECK-NEXT: cudagraph.launch @nothing_before_partition_0(%[[D]])
// CHECK-NOT: cudagraph.hoisted
// expected-remark@+1 {{runs 1 CUDA-graph partition}}
func.func @nothing_before(%w: memref<16xf32>) -> memref<16xf32> {
  // expected-remark@below {{runs outside CUDA graphs: 'memref.alloc' touches host memory (#cudagraph.host)}}
  %h = memref.alloc() : memref<16xf32, #cudagraph.host>
  // expected-remark@below {{runs outside CUDA graphs: 'func.call' touches host memory (#cudagraph.host)}}
  func.call @fill_on_host(%h) : (memref<16xf32, #cudagraph.host>) -> ()
  %d = memref.alloc() : memref<16xf32>
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory (#cudagraph.host)}}
  memref.copy %h, %d : memref<16xf32, #cudagraph.host> to memref<16xf32>
  %o = memref.alloc() : memref<16xf32>
  linalg.add ins(%d, %d : memref<16xf32>, memref<16xf32>) outs(%o : memref<16xf32>)
  return %o : memref<16xf32>
}

// -----

// A launched partition that is only declared has no body to hoist into.
// CHECK-LABEL: func.func @declared_partition
// CHECK: cudagraph.launch @external_partition
// CHECK-NEXT: %[[D:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: memref.copy %{{.*}}, %[[D]]
func.func private @external_partition(memref<16xf32>) attributes {cudagraph.partition = 0 : i64}
func.func @declared_partition(%x: memref<16xf32>, %h: memref<16xf32, #cudagraph.host>) -> memref<16xf32> {
  // expected-remark@below {{runs outside CUDA graphs: 'cudagraph.launch' runs a partition, a graph of its own}}
  cudagraph.launch @external_partition(%x) : (memref<16xf32>) -> ()
  %d = memref.alloc() : memref<16xf32>
  // expected-remark@below {{runs outside CUDA graphs: 'memref.copy' touches host memory (#cudagraph.host)}}
  memref.copy %h, %d : memref<16xf32, #cudagraph.host> to memref<16xf32>
  return %d : memref<16xf32>
}
