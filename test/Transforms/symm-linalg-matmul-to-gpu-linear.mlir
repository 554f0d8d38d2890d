// Weights stored n x k (nn.Linear's layout) under the GEMV options: with
// the GEMVs off (gemv=false) nothing reads such a weight, so the matmul
// keeps cuBLAS and the remark says why; a gemv tiling whose k-groups are
// not whole warps leaves the one-row GEMV out (a remark) and keeps the
// 4-row one.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv=false})' | FileCheck %s --check-prefix=OFF
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv-k-groups=48})' 2>&1 | FileCheck %s --check-prefix=RAGGED

// OFF-LABEL: func.func @linear_weight
// OFF-NOT: gpu.launch_func
// OFF: linalg.matmul indexing_maps
// RAGGED: remark: no GEMV for up to 1 row(s): 48 k-groups are not whole warps (a warp reads one piece's weight rows)
// RAGGED: remark: matmul 4096x7168, the weights stored n x k: generated GEMVs (up to 4 row(s): the GEMV @symm_matmul_0_gemv4, 448x1 blocks of 128 threads), chosen against cuBLAS by measurement for up to 4 rows
// RAGGED-LABEL: func.func @linear_weight
// RAGGED: max_rows(4)
// RAGGED-NOT: symm_matmul_0_gemv1
func.func @linear_weight(%x: memref<?x4096xbf16>, %w: memref<7168x4096xbf16>,
                         %out: memref<?x7168xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x7168xbf16>)
  // expected-remark@-1 {{keeps cuBLAS: its weights are stored n x k, which only the CUDA-core GEMVs read, and none takes it (see the remarks above, or the gemv option)}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4096xbf16>, memref<7168x4096xbf16>) outs(%out : memref<?x7168xbf16>)
  return
}
