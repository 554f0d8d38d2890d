// The Llama MLP block with its weights in nn.Linear's layout (n x k, as
// Hugging Face checkpoints store them: bench/model/linear_mlp.mlir)
// compiles. Calls of up to 16 rows may run the GEMVs that read such weights
// along their rows: the CUDA-core one for one row (gemv_linear) and the
// tensor-core ones with the mma's operands swapped (gemv_mma_linear): the
// pair's for up to 16 rows with the RMSNorm prologue and the SiLU epilogue
// fused, the down projection's for up to 8 and up to 16, each chosen
// against cuBLAS by measurement; calls of more rows run cuBLAS, the gate
// and up projections as one symm_rt_matmul_pair and the down projection as
// a strided GEMM of one, each with layout code 1 (SYMM_TRANSPOSED_B). On
// the device machine bench/device/linear_mma_h200.sh checks it against
// torch's F.linear.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %repo/bench/model/linear_mlp.mlir -o %t/linear.o --remarks --emit=llvm,ptx 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t/linear.ll
// RUN: FileCheck %s --check-prefix=PTX < %t/linear.ptx
// RUN: not grep -qE '\.entry symm_matmul_[01]\(' %t/linear.ptx
// RUN: FileCheck %s --check-prefix=HEADER < %t/linear.h

// REMARK: remark: matmul pair (4096x7168 per weight) with the row-norm prologue (its row factor applied to the sums) with the element-wise epilogue, the weights stored n x k: generated GEMVs (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 112x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16, 112x1 blocks of 384 threads), chosen against cuBLAS by measurement for up to 16 rows
// REMARK: remark: matmul 7168x4096, the weights stored n x k: generated GEMVs (up to 1 row(s): the GEMV @symm_matmul_1_gemv1, 128x1 blocks of 256 threads) (up to 8 row(s): the GEMV @symm_matmul_1_mma8, 128x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_1_mma16, 128x1 blocks of 512 threads)
// REMARK-NOT: keeps cuBLAS

// IR-LABEL: define {{.*}}@linear_mlp_async(
// IR: %[[PAIR_ROUNDS:[0-9]+]] = call i64 @symm_rt_kernel_rounds(ptr %0, i64 [[PAIR:[0-9]+]], i64 %[[M:[0-9]+]], i64 16, i64 0)
// IR: call void @symm_rt_matmul_pair(ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, i64 %[[M]], i64 7168, i64 4096, i32 2, i32 0, i32 1)
// IR: call i64 @symm_rt_kernel_rounds(ptr %0, i64 {{[0-9]+}}, i64 %[[M]], i64 16, i64 [[PAIR]])
// IR: call void @symm_rt_batch_matmul(ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, i64 1, i64 %[[M]], i64 4096, i64 7168, i64 7168, i64 0, i64 7168, i64 0, i64 4096, i64 0, i32 2, i32 2, i32 0, i32 1)
// IR-NOT: symm_rt_matmul(

// Only the GEMVs (the grep above: no tiled tensor-core kernel reads n x k
// weights); the tensor-core ones multiply with mma.sync.
// PTX-DAG: .visible .entry symm_matmul_0_gemv1(
// PTX-DAG: .visible .entry symm_matmul_0_mma16(
// PTX-DAG: .visible .entry symm_matmul_1_gemv1(
// PTX-DAG: .visible .entry symm_matmul_1_mma8(
// PTX-DAG: .visible .entry symm_matmul_1_mma16(
// PTX-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32

// The C entry point takes the weights as they are stored: gate and up
// 7168 x 4096, down 4096 x 7168.
// HEADER-LABEL: void linear_mlp(
// HEADER: uint16_t *arg2 /* memref<7168x4096xbf16> */,
// HEADER-NEXT: uint16_t *arg3 /* memref<7168x4096xbf16> */,
// HEADER-NEXT: uint16_t *arg4 /* memref<4096x7168xbf16> */,
