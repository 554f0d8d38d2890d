// Seed 000 under CUDA graphs, through the whole middle end: a graph input
// that must be symmetric gets a single persistent P2P buffer in the module
// header, a single copy inside partition 0, and no copy in the outer call.
// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-mem-middle-end,cudagraph-partition,cudagraph-hoist-allocs)' 2>/dev/null | FileCheck %s

// CHECK-COUNT-1: symm_mem.global @__symm_input_layer_arg0 : memref<8x64xbf16, #symm_tp>
// CHECK-NOT: symm_mem.global @__symm_input
// CHECK-LABEL: func.func @layer
// CHECK-NOT: memref.copy
// CHECK-NOT: symm_mem.get_global @__symm_input
// CHECK: cudagraph.launch @layer_partition_0(%arg0, %arg1)
// CHECK-NOT: memref.copy
// CHECK: return
// CHECK-LABEL: func.func private @layer_partition_0
// CHECK: %[[BUF:.*]] = symm_mem.get_global @__symm_input_layer_arg0
// CHECK: memref.copy %arg0, %[[BUF]]
// CHECK: symm_mem.all_reduce_out sum %[[BUF]] {{.*}} algorithm one_shot
// CHECK: linalg.matmul
// CHECK-NOT: memref.copy %arg0
symm_mem.group @tp world_size(2)
func.func @layer(%x: memref<8x64xbf16>, %w: memref<64x64xbf16>) -> memref<8x64xbf16> {
  %h = symm_mem.all_reduce sum %x group @tp algorithm one_shot : memref<8x64xbf16> -> memref<8x64xbf16>
  %o = memref.alloc() : memref<8x64xbf16>
  linalg.matmul ins(%h, %w : memref<8x64xbf16>, memref<64x64xbf16>) outs(%o : memref<8x64xbf16>)
  return %o : memref<8x64xbf16>
}
