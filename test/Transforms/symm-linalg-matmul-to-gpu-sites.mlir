// The runtime keeps its measured choice between a matmul's generated
// branch and cuBLAS per site id. The id covers the function, the matmul
// and the kernels the generated branch runs: the same program built with
// another GEMV tiling (here the tensor-core GEMV's k-groups) is another
// site, so two builds loaded into one process each measure their own
// choice; the same build gives the same id (stable across ranks and runs).
// RUN: rm -rf %t && mkdir -p %t
// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' 2>/dev/null | FileCheck %s
// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' 2>/dev/null | grep -o 'kernel_rounds site([0-9]*)' > %t/default
// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' 2>/dev/null | grep -o 'kernel_rounds site([0-9]*)' > %t/again
// RUN: symm-opt %s --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-k-groups=8})' 2>/dev/null | grep -o 'kernel_rounds site([0-9]*)' > %t/tiled
// RUN: diff %t/default %t/again
// RUN: not diff %t/default %t/tiled

// CHECK-LABEL: func.func @o_proj
// CHECK: %[[ROUNDS:.*]] = symm_mem.kernel_rounds site([[SITE:[0-9]+]]) rows(%{{.*}}) max_rows(16)
// CHECK: symm_mem.kernel_variant site([[SITE]]) rows(%{{.*}}) round(%{{.*}}) max_rows(16)
// CHECK: symm_mem.kernel_variant_end site([[SITE]]) rows(%{{.*}}) round(%{{.*}})
func.func @o_proj(%x: memref<?x2048xbf16>, %w: memref<2048x4096xbf16>, %out: memref<?x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x4096xbf16>)
  linalg.matmul ins(%x, %w : memref<?x2048xbf16>, memref<2048x4096xbf16>) outs(%out : memref<?x4096xbf16>)
  return
}
