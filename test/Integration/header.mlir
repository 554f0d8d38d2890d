// The header declares each entry point in the lowering's convention: every
// function that launches kernels or needs the runtime takes
// `symm_runtime *` first (convert-symm-mem-to-runtime marks it
// symm.runtime_handle, which reaches the llvm.func), and has an
// asynchronous form NAME_async(runtime, stream, ...) returning a status
// (marked symm.async_entry).
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %s -o %t/entries.o --emit=mlir
// RUN: FileCheck %s < %t/entries.h
// RUN: FileCheck %s --check-prefix=LOWERED < %t/entries.llvm.mlir

// CHECK: void scale(
// CHECK-NEXT: symm_runtime *runtime,
// CHECK-NEXT: float *arg0 /* memref<256xf32> */,
// CHECK-NEXT: float *arg1 /* memref<256xf32> */);
// CHECK: int32_t scale_async(
// CHECK-NEXT: symm_runtime *runtime,
// CHECK-NEXT: void *stream,
// CHECK-NEXT: float *arg0 /* memref<256xf32> */,
// CHECK-NEXT: float *arg1 /* memref<256xf32> */);
// CHECK: void reduce(
// CHECK-NEXT: symm_runtime *runtime,
// CHECK-NEXT: float *arg0 /* memref<256xf32> */,
// CHECK: int32_t reduce_async(
// CHECK-NEXT: symm_runtime *runtime,
// CHECK-NEXT: void *stream,

// LOWERED-DAG: llvm.func @reduce(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr) attributes {symm.runtime_handle}
// LOWERED-DAG: llvm.func @reduce_async({{.*}}) -> i32 attributes {symm.async_entry, symm.runtime_handle}
// LOWERED-DAG: llvm.func @scale(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: !llvm.ptr) attributes {symm.runtime_handle}
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
