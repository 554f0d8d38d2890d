// The header declares each entry point in the lowering's convention: a
// function that needs the runtime (collectives, device memory) takes
// `symm_runtime *` first (convert-symm-mem-to-gpu marks it
// symm.runtime_handle, which reaches the llvm.func); one that launches only
// plain kernels does not.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %s -o %t/entries.o --emit=mlir
// RUN: FileCheck %s < %t/entries.h
// RUN: FileCheck %s --check-prefix=LOWERED < %t/entries.llvm.mlir

// CHECK: void scale(
// CHECK-NEXT: float *arg0 /* memref<256xf32> */,
// CHECK-NEXT: float *arg1 /* memref<256xf32> */);
// CHECK: void reduce(
// CHECK-NEXT: symm_runtime *runtime,
// CHECK-NEXT: float *arg0 /* memref<256xf32> */,

// LOWERED-DAG: llvm.func @reduce({{.*}}) attributes {symm.runtime_handle}
// LOWERED-DAG: llvm.func @scale(%arg0: !llvm.ptr, %arg1: !llvm.ptr) {
symm_mem.group @tp world_size(2)
func.func @scale(%a: memref<256xf32>, %b: memref<256xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%a : memref<256xf32>) outs(%b : memref<256xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %v, %v : f32
    linalg.yield %r : f32
  }
  return
}
func.func @reduce(%a: memref<256xf32>, %b: memref<256xf32>) {
  %t = memref.alloc() : memref<256xf32>
  memref.copy %a, %t : memref<256xf32> to memref<256xf32>
  symm_mem.all_reduce_out sum %t into %b group @tp : memref<256xf32>, memref<256xf32>
  return
}
