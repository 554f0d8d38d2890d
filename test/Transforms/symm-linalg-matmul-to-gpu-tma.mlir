// The GEMV whose weight the TMA streams (`tma-gemv`, off by default): a
// single matmul's calls of 2 to 16 rows take it where the runtime has the
// weight's descriptor (`symm_mem.tensor_map`, non-zero, asked for only
// where the call's rows fit), passed as an extra kernel argument; else the
// register-streaming `mma16`.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{tma-gemv=true})' | FileCheck %s
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{tma-gemv=true launch-dependents=false})' 2>&1 | FileCheck %s --check-prefix=SM80

// The down projection's two split-K slices: one descriptor of both (a
// stack of 7168 rows), boxes of 128 rows.
// The kernel (its module comes first): its descriptor last; the first rows' lines towards L2, then
// the ring's barriers, the first stages' copies, the rows of `a` staged,
// and the consumers' `ldmatrix.trans` and `mma.sync`.
// CHECK-LABEL: gpu.func @symm_matmul_0_tma16(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[DESC:[^:]*]]: i64) kernel
// CHECK-SAME: gpu.known_block_size = array<i32: 544, 1, 1>
// CHECK: %[[MAP:.*]] = llvm.inttoptr %[[DESC]] : i64 to !llvm.ptr
// CHECK: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.prefetch tensormap, %[[MAP]] : !llvm.ptr
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[MAP]], %{{.*}}, box[%{{.*}}, %{{.*}}] : !llvm.ptr<7>, !llvm.ptr
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.ldmatrix %{{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK-COUNT-2: nvvm.mma.sync
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<3>
// CHECK-LABEL: func.func @slices
// CHECK-SAME: (%[[A:.*]]: memref<?x7168xbf16>, %[[W:.*]]: memref<7168x4096xbf16>, %[[P:.*]]: memref<2x?x4096xf32>)
// CHECK: %[[WS:.*]] = memref.reinterpret_cast %[[W]]
// CHECK: %[[M:.*]] = memref.dim
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1
// CHECK: %[[FITS:.*]] = arith.cmpi ule, %{{.*}}, %c16_i64
// CHECK: %[[D:.*]] = scf.if %[[FITS]] -> (i64) {
// CHECK-NEXT: %[[MAP:.*]] = symm_mem.tensor_map %[[WS]] box(128 x 64) : memref<2x3584x4096xbf16>
// CHECK-NEXT: scf.yield %[[MAP]] : i64
// CHECK: %[[HAS:.*]] = arith.cmpi ne, %[[D]], %c0_i64
// CHECK: %[[TAKES:.*]] = arith.andi %[[FITS]], %[[HAS]] : i1
// CHECK: scf.if %[[TAKES]] {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_tma16 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%c544, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64, %[[D]] : i64)
// CHECK: } else {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16
func.func @slices(%a: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>, %p: memref<2x?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x7168xbf16>
  %as = memref.reinterpret_cast %a to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
      : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
  %ws = memref.reinterpret_cast %w to offset: [0], sizes: [2, 3584, 4096], strides: [14680064, 4096, 1]
      : memref<7168x4096xbf16> to memref<2x3584x4096xbf16>
  // expected-remark@+1 {{matmul in 2 split-K slices of 3584x4096: generated kernel @symm_matmul_0 (64x2 blocks of 512 threads, 111040 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 64x2 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_tma16, 64x2 blocks of 544 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, 64x2 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_staged, 64x2 blocks of 512 threads)}}
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
      outs(%p : memref<2x?x4096xf32>)
  return
}
// Without launch-dependents (sm_80) there is no TMA GEMV, and a remark
// says why.
// SM80: remark: no GEMV for up to 16 row(s): the TMA needs sm_90 or later (launch-dependents marks it)

// -----

// Unsplit, the down projection's 16 rows of K = 14336 do not fit in shared
// memory beside the ring: no TMA GEMV, and a remark says why.
// CHECK-LABEL: func.func @whole
// CHECK-NOT: tma16
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16
func.func @whole(%a: memref<?x14336xbf16>, %w: memref<14336x4096xbf16>, %out: memref<?x4096xbf16>) {
  // expected-remark@+2 {{no GEMV for up to 16 row(s): 16 row(s) of K = 14336 as bf16, the sums or the weight's stages do not fit in shared memory}}
  // expected-remark@+1 {{matmul 14336x4096: generated kernel}}
  linalg.matmul {symm.overwrites} ins(%a, %w : memref<?x14336xbf16>, memref<14336x4096xbf16>)
      outs(%out : memref<?x4096xbf16>)
  return
}
