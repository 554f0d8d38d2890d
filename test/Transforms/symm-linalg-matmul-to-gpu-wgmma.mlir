// The single matmuls' GEMV on the warpgroup tensor cores (`wgmma-gemv`,
// which symm-compile turns on for --chip sm_90a): a call of 17 to 64 rows
// takes the 64-row kernel, 65 to 128 the 128-row one, where the runtime
// has the weight's descriptor (`symm_mem.tensor_map`, passed as an extra
// argument); the site is measured against cuBLAS up to 128 rows, and a
// call of more rows than the tensor-core kernel takes (16) without a
// descriptor takes cuBLAS.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true})' | FileCheck %s
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true wgmma-gemv-few=true wgmma-gemv-max-rows=64})' 2>&1 | FileCheck %s --check-prefix=FEW
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true launch-dependents=false})' 2>&1 | FileCheck %s --check-prefix=SM80
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true wgmma-gemv-prefetch=480})' 2>&1 | FileCheck %s --check-prefix=PREFETCH

// The down projection's two split-K slices (3584 rows of the weight each).
// The 64-row kernel: 160 threads (the warpgroup and the producer warp),
// the weight's descriptor and then that of the call's rows of `a` last; a
// full barrier counts the producer's expect_tx, an empty one the
// warpgroup's 4 warps. The producer: per stage the weight's TMA box of
// 128 x 64 (L2 evict-first: it is read once) and two boxes of `a` (64 x
// 64 each, at column slice x 3584 + 128 it + 64 p), 32 KB in all. The
// consumers: 8 `wgmma`s per stage (M-major weight, K-major `a`), a
// commit, a wait for all but this stage's, the stage before released.
// CHECK-LABEL: gpu.func @symm_matmul_0_wgmma64(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[DESC:[^:]*]]: i64, %[[ADESC:[^:]*]]: i64) kernel
// CHECK-SAME: gpu.known_block_size = array<i32: 160, 1, 1>
// CHECK: %[[MAP:.*]] = llvm.inttoptr %[[DESC]] : i64 to !llvm.ptr
// CHECK: %[[AMAP:.*]] = llvm.inttoptr %[[ADESC]] : i64 to !llvm.ptr
// CHECK: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c4_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c32768_i32
// CHECK: %[[POLICY:.*]] = llvm.inline_asm "createpolicy.fractional.L2::evict_first.b64 $0, 1.0;", "=l" : () -> i64
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}] l2_cache_hint = %[[POLICY]] : !llvm.ptr<7>, !llvm.ptr
// CHECK-COUNT-2: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[AMAP]], %{{.*}}, box[%{{.*}}, %c0_i32{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-8: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %{{.*}}, <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <col>], B[<bf16>, <one>, <col>]
// CHECK-NEXT: nvvm.wgmma.commit.group.sync.aligned
// CHECK-NEXT: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.griddepcontrol launch_dependents
// With wgmma-gemv-prefetch = 480 the block's 160 threads prefetch three
// rows each before the ring starts: rows t, t + 160 and t + 320 of the
// 480 (clamped to the last).
// PREFETCH-LABEL: gpu.func @symm_matmul_0_wgmma64(
// PREFETCH: %[[TID:.*]] = gpu.thread_id x
// PREFETCH: arith.minui %{{.*}}, %c479_i64
// PREFETCH: nvvm.prefetch level = L2
// PREFETCH: %[[R1:.*]] = arith.addi %{{.*}}, %c160_i64
// PREFETCH: arith.minui %[[R1]], %c479_i64
// PREFETCH: nvvm.prefetch level = L2
// PREFETCH: %[[R2:.*]] = arith.addi %{{.*}}, %c320_i64
// PREFETCH: arith.minui %[[R2]], %c479_i64
// PREFETCH: nvvm.prefetch level = L2
// PREFETCH-NOT: nvvm.prefetch
// PREFETCH: nvvm.mbarrier.init
// CHECK-LABEL: gpu.func @symm_matmul_0_wgmma128(
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 16>
// The host: a call of more than 16 rows may run the generated branch only
// where the runtime has the descriptors of the kernel it would take (the
// weight's, a stack of both slices' 7168 rows, and that of the call's rows
// of `a` as one M x 7168 matrix, boxes of the kernel's rows); the site is
// measured up to 128 rows. In the generated branch each kernel asks for its
// descriptors only where the call's rows fit it.
// CHECK-LABEL: func.func @slices
// CHECK: %[[AS:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, %{{.*}}, 3584]
// CHECK: %[[WS:.*]] = memref.reinterpret_cast %{{.*}} to offset: [0], sizes: [2, 3584, 4096]
// CHECK: %[[M:.*]] = memref.dim
// CHECK: %[[WITHIN:.*]] = arith.cmpi ule, %[[M]], %c16 : index
// CHECK: scf.if %[[WITHIN]] -> (i1) {
// CHECK: } else {
// CHECK: %[[UP64:.*]] = arith.cmpi ule, %[[M]], %c64 : index
// CHECK: scf.if %[[UP64]] -> (i1) {
// CHECK: symm_mem.tensor_map %[[WS]] box(128 x 64) : memref<2x3584x4096xbf16>
// CHECK: %[[A2:.*]] = memref.reinterpret_cast %[[AS]] to offset: [0], sizes: [%{{.*}}, 7168], strides: [7168, 1]
// CHECK: symm_mem.tensor_map %[[A2]] box(64 x 64) : memref<?x7168xbf16, strided<[7168, 1]>>
// CHECK: } else {
// CHECK: symm_mem.tensor_map %{{.*}} box(128 x 64) : memref<?x7168xbf16, strided<[7168, 1]>>
// CHECK: symm_mem.kernel_rounds site({{.*}}) rows(%[[M]]) max_rows(128)
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16_staged
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %{{.*}}, %c64_i64
// CHECK: %[[D:.*]] = scf.if %[[FITS]] -> (i64) {
// CHECK-NEXT: symm_mem.tensor_map %[[WS]] box(128 x 64)
// CHECK: %[[AD:.*]] = scf.if %[[FITS]] -> (i64) {
// CHECK: symm_mem.tensor_map %{{.*}} box(64 x 64)
// CHECK: scf.if %{{.*}} {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_wgmma64 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c160, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64, %[[D]] : i64, %[[AD]] : i64)
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_wgmma128
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0 blocks
// With wgmma-gemv-few a 16-row kernel takes calls of 2 to 16 rows first.
// FEW: remark: matmul in 2 split-K slices of 3584x4096: {{.*}}(up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 64x2 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_wgmma16, 64x2 blocks of 160 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, {{.*}} (up to 64 row(s): the GEMV @symm_matmul_0_wgmma64, 64x2 blocks of 160 threads), chosen against cuBLAS by measurement for up to 64 rows
// FEW-NOT: wgmma128
// FEW: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>
// Without launch-dependents (before sm_90) there is no wgmma GEMV, and a
// remark says why.
// SM80: remark: no GEMV for up to 64 row(s): wgmma needs sm_90a (launch-dependents marks sm_90 and up)
// SM80: remark: no GEMV for up to 128 row(s): wgmma needs sm_90a
func.func @slices(%a: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>, %p: memref<2x?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x7168xbf16>
  %as = memref.reinterpret_cast %a to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
      : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
  %ws = memref.reinterpret_cast %w to offset: [0], sizes: [2, 3584, 4096], strides: [14680064, 4096, 1]
      : memref<7168x4096xbf16> to memref<2x3584x4096xbf16>
  // expected-remark@+1 {{matmul in 2 split-K slices of 3584x4096: generated kernel @symm_matmul_0 (64x2 blocks of 512 threads, 111040 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 64x2 blocks of 512 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, 64x2 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_staged, 64x2 blocks of 512 threads) (up to 64 row(s): the GEMV @symm_matmul_0_wgmma64, 64x2 blocks of 160 threads) (up to 128 row(s): the GEMV @symm_matmul_0_wgmma128, 64x2 blocks of 160 threads), chosen against cuBLAS by measurement for up to 128 rows whose operands are 16-byte aligned (others take cuBLAS)}}
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
      outs(%p : memref<2x?x4096xf32>)
  return
}

// -----

// Split-K slices of 864 rows (a TP-8 shard of a 13824-wide MLP) are not
// whole stages of 128 weight rows: no wgmma GEMV, a remark says why, and
// the site is measured up to the tensor-core kernel's 16 rows only.
// CHECK-LABEL: func.func @uneven_slices
// CHECK-NOT: wgmma
// CHECK: symm_mem.kernel_rounds site({{.*}}) rows(%{{.*}}) max_rows(16)
func.func @uneven_slices(%a: memref<?x1728xbf16>, %w: memref<1728x5120xbf16>, %p: memref<2x?x5120xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x1728xbf16>
  %as = memref.reinterpret_cast %a to offset: [0], sizes: [2, %m, 864], strides: [864, 1728, 1]
      : memref<?x1728xbf16> to memref<2x?x864xbf16, strided<[864, 1728, 1]>>
  %ws = memref.reinterpret_cast %w to offset: [0], sizes: [2, 864, 5120], strides: [4423680, 5120, 1]
      : memref<1728x5120xbf16> to memref<2x864x5120xbf16>
  // expected-remark@+3 {{no GEMV for up to 64 row(s): split-K slices that are not whole wgmma stages of one matrix of rows (K = 864)}}
  // expected-remark@+2 {{no GEMV for up to 128 row(s): split-K slices that are not whole wgmma stages of one matrix of rows (K = 864)}}
  // expected-remark@+1 {{matmul in 2 split-K slices of 864x5120: generated kernel}}
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x864xbf16, strided<[864, 1728, 1]>>, memref<2x864x5120xbf16>)
      outs(%p : memref<2x?x5120xf32>)
  return
}
