// RUN: symm-opt %s --pass-pipeline='builtin.module(func.func(symm-mem-to-dps,symm-mem-fuse-epilogue,symm-mem-select-all-reduce),symm-mem-realize,symm-mem-plan,symm-mem-expand-collectives,convert-symm-mem-to-runtime,func.func(symm-linalg-rows-to-gpu))' | FileCheck %s
// RUN: symm-opt %s --pass-pipeline='builtin.module(func.func(symm-mem-to-dps))' | FileCheck %s --check-prefix=DPS

// symm-fuzz found a use-after-free here (valgrind: an invalid read inside
// the conversion): the passes walked a function, then erased ops whose
// regions held ops still on the walk's list (a linalg.matmul's body, a
// reduction generic's body). They now pick what to rewrite first.
// CHECK-LABEL: func.func @batched_async
// CHECK: call @symm_rt_matmul
// CHECK: gpu.launch
// CHECK: gpu.all_reduce add
// CHECK-NOT: linalg.matmul
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#w = affine_map<(d0, d1, d2) -> (d2)>
#out = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @batched(%x: memref<2x8x64xf32>, %w: memref<64xf32>, %o: memref<2x8xf32>,
                   %a: memref<4x8xf32>, %b: memref<8x16xf32>, %c: memref<4x16xf32>) {
  linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
  linalg.generic {indexing_maps = [#id3, #w, #out], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<2x8x64xf32>, memref<64xf32>) outs(%o : memref<2x8xf32>) {
  ^bb0(%v: f32, %s: f32, %acc: f32):
    %p = arith.mulf %v, %s : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  }
  return
}

// symm-mem-to-dps replaces each functional collective through the
// rewriter of MLIR's walk-based pattern driver (melior's patterns,
// ir::patterns): the ones nested in an scf.if's regions are rewritten
// too, and the walk goes on past each erased op.
// DPS-LABEL: func.func @nested
// DPS: scf.if
// DPS: %[[IN:.*]] = memref.alloc() : memref<8xf32>
// DPS-NEXT: symm_mem.all_reduce_out sum %{{.*}} into %[[IN]] group @tp
// DPS: scf.if
// DPS: %[[DEEP:.*]] = memref.alloc() : memref<8xf32>
// DPS-NEXT: symm_mem.all_reduce_out max %{{.*}} into %[[DEEP]] group @tp algorithm two_shot
// DPS: %[[OUT:.*]] = memref.alloc() : memref<8xf32>
// DPS-NEXT: symm_mem.all_reduce_out sum %{{.*}} into %[[OUT]] group @tp
// DPS-NOT: symm_mem.all_reduce sum
symm_mem.group @tp world_size(2)
func.func @nested(%c: i1, %x: memref<8xf32, #symm_mem.allocator<symmetric, @tp>>) {
  scf.if %c {
    %a = symm_mem.all_reduce sum %x group @tp : memref<8xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<8xf32>
    scf.if %c {
      %b = symm_mem.all_reduce max %x group @tp algorithm two_shot : memref<8xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<8xf32>
    }
  }
  %d = symm_mem.all_reduce sum %x group @tp : memref<8xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<8xf32>
  return
}
