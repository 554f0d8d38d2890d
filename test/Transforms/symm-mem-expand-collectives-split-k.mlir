// symm-mem-expand-collectives on an all-reduce with a split-K matmul
// prologue (the Llama MLP block's down projection, 2 ranks): calls of up
// to 128 rows run the matmul as 2 slices that the Lamport one-shot sums;
// above, the matmul runs whole into the all-reduce's input, marked with
// the fewest rows that reach it (`symm.min_rows`: 129 before the two-shot,
// 1025 before the one-shot between barriers), so that
// symm-linalg-matmul-to-gpu builds it no kernel for fewer rows: its
// generated kernels would take up to 16, so it keeps cuBLAS, with a remark.
// RUN: symm-opt %examples/llama_mlp.mlir --pass-pipeline='builtin.module(func.func(symm-mem-to-dps,symm-mem-fuse-epilogue,symm-mem-select-all-reduce,symm-mem-split-k),symm-mem-realize,symm-mem-plan,cudagraph-partition,cudagraph-hoist-allocs,symm-mem-expand-collectives)' 2>/dev/null | FileCheck %s
// CHECK-LABEL: func.func @llama_mlp
// CHECK: %[[ROWS:.*]] = arith.cmpi ule, %{{.*}}, %c1048576_i64 : i64
// CHECK: scf.if %[[ROWS]] {
// CHECK: linalg.batch_matmul {symm.overwrites} ins(%{{.*}}, %{{.*}} : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>) outs(%{{.*}} : memref<2x?x4096xf32>)
// CHECK: } else {
// CHECK: linalg.matmul {symm.min_rows = 129 : i64, symm.overwrites} ins(%[[A:.*]], %[[W:.*]] : memref<?x7168xbf16>, memref<7168x4096xbf16>)
// CHECK: linalg.matmul {symm.min_rows = 1025 : i64, symm.overwrites} ins(%[[A]], %[[W]] : memref<?x7168xbf16>, memref<7168x4096xbf16>)
// RUN: symm-opt %examples/llama_mlp.mlir --pass-pipeline='builtin.module(func.func(symm-mem-to-dps,symm-mem-fuse-epilogue,symm-mem-select-all-reduce,symm-mem-split-k),symm-mem-realize,symm-mem-plan,cudagraph-partition,cudagraph-hoist-allocs,symm-mem-expand-collectives,symm-linalg-matmul-to-gpu)' 2>&1 >/dev/null | FileCheck %s --check-prefix=KERNELS
// KERNELS-DAG: remark: keeps cuBLAS: only calls of 129 rows or more reach it (a split-K matmul's whole form), and its generated kernels take up to 16
// KERNELS-DAG: remark: keeps cuBLAS: only calls of 1025 rows or more reach it (a split-K matmul's whole form), and its generated kernels take up to 16
// KERNELS-DAG: remark: matmul in 2 split-K slices of 3584x4096: generated kernel @symm_matmul_1
