// The Llama MLP block with its weights in nn.Linear's layout (n x k, as
// Hugging Face checkpoints store them: bench/model/linear_mlp.mlir)
// compiles: the gate and up projections are one symm_rt_matmul_pair and
// the down projection a strided GEMM of one, each with layout code 1
// (SYMM_TRANSPOSED_B); every matmul says why it keeps cuBLAS. On the device
// machine bench/device/linear_h200.sh checks it against torch's F.linear.
// REQUIRES: symm-compile
// RUN: rm -rf %t && mkdir -p %t
// RUN: %symm-compile %repo/bench/model/linear_mlp.mlir -o %t/linear.o --remarks --emit=llvm 2>&1 \
// RUN:   | FileCheck %s --check-prefix=REMARK
// RUN: FileCheck %s --check-prefix=IR < %t/linear.ll
// RUN: FileCheck %s --check-prefix=HEADER < %t/linear.h

// REMARK-COUNT-3: remark: keeps cuBLAS: reads its weight as n x k (nn.Linear's layout); the generated kernels read it as k x n, row-major: store it transposed once, where the weights are loaded, for them to run
// REMARK-NOT: keeps cuBLAS

// IR-LABEL: define {{.*}}@linear_mlp_async(
// IR: call void @symm_rt_matmul_pair(ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, i64 %[[M:[0-9]+]], i64 7168, i64 4096, i32 2, i32 0, i32 1)
// IR: call void @symm_rt_batch_matmul(ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, ptr %{{[0-9]+}}, i64 1, i64 %[[M]], i64 4096, i64 7168, i64 7168, i64 0, i64 7168, i64 0, i64 4096, i64 0, i32 2, i32 2, i32 0, i32 1)
// IR-NOT: symm_rt_matmul(

// The C entry point takes the weights as they are stored: gate and up
// 7168 x 4096, down 4096 x 7168.
// HEADER-LABEL: void linear_mlp(
// HEADER: uint16_t *arg2 /* memref<7168x4096xbf16> */,
// HEADER-NEXT: uint16_t *arg3 /* memref<7168x4096xbf16> */,
// HEADER-NEXT: uint16_t *arg4 /* memref<4096x7168xbf16> */,
