// The Llama MLP block with its weights in nn.Linear's layout (n x k, as
// Hugging Face checkpoints store them: bench/model/linear_mlp.mlir)
// compiles. Calls of up to 4 rows may run the GEMVs that read such weights
// along their rows (gemv_linear; one for one row, one for up to 4): the
// pair's with the RMSNorm prologue and the SiLU epilogue fused, and the down
// projection's, each chosen against cuBLAS by measurement; calls of more
// rows run cuBLAS, the gate and up
// projections as one symm_rt_matmul_pair and the down projection as a
// strided GEMM of one, each with layout code 1 (SYMM_TRANSPOSED_B). On the
// device machine bench/device/linear_gemv_h200.sh checks it against
// torch's F.linear.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %repo/bench/model/linear_mlp.mlir -o %t/linear.o --remarks --emit=llvm,ptx 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t/linear.ll
// RUN: FileCheck %s --check-prefix=PTX < %t/linear.ptx
// RUN: not grep -qE '\.entry symm_matmul_[01]\(' %t/linear.ptx
// RUN: FileCheck %s --check-prefix=HEADER < %t/linear.h

// REMARK: remark: matmul pair (4096x7168 per weight) with the row-norm prologue (its row factor applied to the sums) with the element-wise epilogue, the weights stored n x k: generated GEMVs (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 112x1 blocks of 512 threads) (up to 4 row(s): the GEMV @symm_matmul_0_gemv4, 448x1 blocks of 256 threads), chosen against cuBLAS by measurement for up to 4 rows
// REMARK: remark: matmul 7168x4096, the weights stored n x k: generated GEMVs (up to 1 row(s): the GEMV @symm_matmul_1_gemv1, 128x1 blocks of 256 threads) (up to 4 row(s): the GEMV @symm_matmul_1_gemv4, 256x1 blocks of 128 threads)
// REMARK-NOT: keeps cuBLAS

// IR-LABEL: define {{.*}}@linear_mlp_async(
// IR: %[[PAIR_ROUNDS:[0-9]+]] = call i64 @symm_rt_kernel_rounds(ptr %0, i64 [[PAIR:[0-9]+]], i64 %[[M:[0-9]+]], i64 4, i64 0)
// IR: call void @symm_rt_matmul_pair(ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, i64 %[[M]], i64 7168, i64 4096, i32 2, i32 0, i32 1)
// IR: call i64 @symm_rt_kernel_rounds(ptr %0, i64 {{[0-9]+}}, i64 %[[M]], i64 4, i64 [[PAIR]])
// IR: call void @symm_rt_batch_matmul(ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, i64 1, i64 %[[M]], i64 4096, i64 7168, i64 7168, i64 0, i64 7168, i64 0, i64 4096, i64 0, i32 2, i32 2, i32 0, i32 1)
// IR-NOT: symm_rt_matmul(

// Only the two GEMVs (the grep above: no tensor-core kernel reads n x k
// weights).
// PTX-DAG: .visible .entry symm_matmul_0_gemv1(
// PTX-DAG: .visible .entry symm_matmul_0_gemv4(
// PTX-DAG: .visible .entry symm_matmul_1_gemv1(
// PTX-DAG: .visible .entry symm_matmul_1_gemv4(

// The C entry point takes the weights as they are stored: gate and up
// 7168 x 4096, down 4096 x 7168.
// HEADER-LABEL: void linear_mlp(
// HEADER: uint16_t *arg2 /* memref<7168x4096xbf16> */,
// HEADER-NEXT: uint16_t *arg3 /* memref<7168x4096xbf16> */,
// HEADER-NEXT: uint16_t *arg4 /* memref<4096x7168xbf16> */,
