// Weights stored n x k (nn.Linear's layout) under the GEMV options. By
// default a lone matmul gets the one-row CUDA-core GEMV (gemv_linear) and
// the tensor-core GEMVs with the mma's operands swapped (gemv_mma_linear),
// for up to 8 and up to 16 rows (@linear_weight in symm-linalg-matmul-to-gpu.mlir).
// - With both GEMV kinds off nothing reads such a weight: the matmul keeps
//   cuBLAS and the remark says why (OFF).
// - A gemv tiling whose k-groups are not whole warps leaves the one-row
//   GEMV out (a remark); the tensor-core ones take every call of up to 16
//   rows, one row too (RAGGED).
// - Without the tensor-core GEMV, the CUDA-core one for up to 4 rows takes
//   over from 2 rows, as before it existed (NOMMA); with gemv-max-rows=4 it
//   goes before the tensor-core ones (FEW).
// - 32 columns a warp (mma-gemv-columns=32) is for n x k weights only: the
//   k x n matmul's tensor-core GEMV is left out with a remark (NARROW).
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv=false mma-gemv=false})' 2>&1 | FileCheck %s --check-prefix=OFF
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv-k-groups=48})' 2>&1 | FileCheck %s --check-prefix=RAGGED
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv=false})' 2>&1 | FileCheck %s --check-prefix=NOMMA
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv-max-rows=4})' 2>&1 | FileCheck %s --check-prefix=FEW
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-columns=32})' 2>&1 | FileCheck %s --check-prefix=NARROW

// OFF: remark: keeps cuBLAS: its weights are stored n x k, which only the GEMVs read, and none takes it (see the remarks above, or the gemv and mma-gemv options)
// OFF-LABEL: func.func @linear_weight
// OFF-NOT: gpu.launch_func
// OFF: linalg.matmul indexing_maps

// RAGGED: remark: no GEMV for up to 1 row(s): 48 k-groups are not whole warps (a warp reads one piece's weight rows)
// RAGGED: remark: matmul 4096x7168, the weights stored n x k: generated GEMVs (up to 8 row(s): the GEMV @symm_matmul_0_mma8, 224x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16, 224x1 blocks of 512 threads), chosen against cuBLAS by measurement for up to 16 rows
// RAGGED-LABEL: func.func @linear_weight
// RAGGED: max_rows(16)
// RAGGED-NOT: @symm_matmul_0_gemv1
// RAGGED: %[[EIGHT:.*]] = arith.cmpi ule, %{{.*}}, %c8_i64{{[_0-9]*}} : i64
// RAGGED: scf.if %[[EIGHT]] {
// RAGGED: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma8
// RAGGED: } else {
// RAGGED: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16

// NOMMA: remark: matmul 4096x7168, the weights stored n x k: generated GEMVs (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 224x1 blocks of 256 threads) (up to 4 row(s): the GEMV @symm_matmul_0_gemv4, 448x1 blocks of 128 threads), chosen against cuBLAS by measurement for up to 4 rows
// NOMMA-LABEL: func.func @linear_weight
// NOMMA: max_rows(4)
// NOMMA-NOT: symm_matmul_0_mma

// FEW: remark: matmul 4096x7168, the weights stored n x k: generated GEMVs (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 224x1 blocks of 256 threads) (up to 4 row(s): the GEMV @symm_matmul_0_gemv4, 448x1 blocks of 128 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma8, 224x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16, 224x1 blocks of 512 threads)
// FEW-LABEL: func.func @linear_weight
// FEW: max_rows(16)
// FEW: @symm_matmul_0_gemv1
// FEW: @symm_matmul_0_gemv4
// FEW: @symm_matmul_0_mma8
// FEW: @symm_matmul_0_mma16

// NARROW: remark: matmul 4096x7168, the weights stored n x k: generated GEMVs (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 224x1 blocks of 256 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma8, 224x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16, 224x1 blocks of 512 threads)
func.func @linear_weight(%x: memref<?x4096xbf16>, %w: memref<7168x4096xbf16>,
                         %out: memref<?x7168xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x7168xbf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4096xbf16>, memref<7168x4096xbf16>) outs(%out : memref<?x7168xbf16>)
  return
}

// -----

// NARROW: remark: no GEMV for up to 16 row(s): the tensor-core GEMV of weights stored k x n takes a multiple of 64 columns, not 32
// NARROW: remark: matmul 4096x7168: generated kernel @symm_matmul_0
// NARROW-LABEL: func.func @row_major_weight
// NARROW-NOT: symm_matmul_0_mma16
func.func @row_major_weight(%x: memref<?x4096xbf16>, %w: memref<4096x7168xbf16>,
                            %out: memref<?x7168xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x7168xbf16>)
  linalg.matmul ins(%x, %w : memref<?x4096xbf16>, memref<4096x7168xbf16>) outs(%out : memref<?x7168xbf16>)
  return
}
