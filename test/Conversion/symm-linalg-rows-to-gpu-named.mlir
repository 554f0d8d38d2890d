// RUN: symm-opt %s --pass-pipeline='builtin.module(func.func(linalg-generalize-named-ops,symm-linalg-rows-to-gpu))' | FileCheck %s

// Named reductions get the same kernel once generalized (symm-to-llvm runs
// linalg-generalize-named-ops first): linalg.reduce over the last
// dimension is a block per row.
// CHECK-LABEL: func.func @named_reduce
// CHECK: gpu.launch
// CHECK: scf.for
// CHECK: arith.addf
// CHECK: gpu.all_reduce add
// CHECK-NOT: linalg.generic {{.*}}reduction
func.func @named_reduce(%x: memref<16x4096xf32>, %s: memref<16xf32>) {
  linalg.reduce ins(%x : memref<16x4096xf32>) outs(%s : memref<16xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %r = arith.addf %in, %acc : f32
      linalg.yield %r : f32
    }
  return
}
