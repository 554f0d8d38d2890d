// The short-grid wgmma GEMV (`wgmma-gemv-short`, which symm-compile turns
// on for --chip sm_90a): a single matmul whose register-streaming
// tensor-core GEMV would run fewer than 128 blocks (TP 2's o_proj: 4096
// columns in one slice, 64 blocks) takes a 16-row wgmma GEMV with an
// 8-stage ring for calls of 2 to 16 rows, before the tensor-core GEMVs
// (which still take them where the runtime has no descriptor), and the
// same ring's 8-row kernel (m64n8k16, `wgmma-gemv-eight-rows`, on unless
// turned off) before it for calls of up to 8; a remark says why. The down projection's two slices (128 blocks) keep the
// register GEMV, and a short grid that the wgmma GEMV cannot read gets a
// remark saying why.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv-short=true})' | FileCheck %s
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' 2>/dev/null | FileCheck %s --check-prefix=OFF
// OFF-LABEL: gpu.module @symm_matmul_kernels
// OFF-NOT: _wgmma
// OFF: func.func @o_proj
// Without its 8-row kernel the 16-row one takes every call of 2 to 16 rows.
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv-short=true wgmma-gemv-eight-rows=false})' 2>/dev/null | FileCheck %s --check-prefix=NO8
// NO8-LABEL: gpu.module @symm_matmul_kernels
// NO8-NOT: _wgmma8
// NO8: gpu.func @symm_matmul_0_wgmma16(
// NO8-NOT: _wgmma8
// NO8: func.func @o_proj

// The 8-row kernel: the same ring, each stage the weight's box and two
// pieces of 8 rows of `a` (18 KB), its m64n8k16 steps taking turns over
// two sets of 4 accumulators a thread.
// CHECK-LABEL: gpu.func @symm_matmul_0_wgmma8(
// CHECK-SAME: gpu.known_block_size = array<i32: 160, 1, 1>
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c18432_i32
// CHECK: %[[LOOP8:.*]]:2 = scf.for {{.*}} iter_args(%[[EIGHT0:[^ ]*]] = %{{[^,]*}}, %[[EIGHT1:[^ ]*]] = %{{[^)]*}}) -> (!llvm.struct<(f32, f32, f32, f32)>, !llvm.struct<(f32, f32, f32, f32)>)
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[EIGHT0]], <m = 64, n = 8, k = 16>
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[EIGHT1]], <m = 64, n = 8, k = 16>
// CHECK-NOT: n = 16
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0

// The kernel: 160 threads (a warpgroup and the producer warp), the
// weight's descriptor and that of the call's rows of `a` last; 8 stages,
// each the weight's box of 128 x 64 and two 64-element pieces of the 16
// rows of `a` (20 KB); m64n16k16 `wgmma`s. The host launches it with the
// ring's 165056 bytes of shared memory (8 stages of 20 KB, 1 KB of
// alignment slack, the barriers).
// CHECK-LABEL: gpu.func @symm_matmul_0_wgmma16(
// CHECK-SAME: %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[DESC:[^:]*]]: i64, %[[ADESC:[^:]*]]: i64) kernel
// CHECK-SAME: gpu.known_block_size = array<i32: 160, 1, 1>
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c20480_i32
// The consumer's loop carries two accumulator sets: a stage's 8 m64n16k16
// steps take turns over them (two chains of 4), and after the loop each
// thread sums the sets element by element.
// CHECK: %[[LOOP:.*]]:2 = scf.for {{.*}} iter_args(%[[SET0:[^ ]*]] = %{{[^,]*}}, %[[SET1:[^ ]*]] = %{{[^)]*}}) -> (!llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>, !llvm.struct<(f32, f32, f32, f32, f32, f32, f32, f32)>)
// CHECK: %[[STEP0:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[SET0]], <m = 64, n = 16, k = 16>
// CHECK: %[[STEP1:.*]] = nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[SET1]], <m = 64, n = 16, k = 16>
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[STEP0]], <m = 64, n = 16, k = 16>
// CHECK: nvvm.wgmma.mma_async %{{.*}}, %{{.*}}, %[[STEP1]], <m = 64, n = 16, k = 16>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: %[[FIRST0:.*]] = llvm.extractvalue %[[LOOP]]#0[0]
// CHECK: %[[FIRST1:.*]] = llvm.extractvalue %[[LOOP]]#1[0]
// CHECK: arith.addf %[[FIRST0]], %[[FIRST1]] : f32
// The host: calls of up to 8 rows ask for the descriptors (the weight's,
// boxes of 128 x 64; the rows', boxes of 8 x 64) and launch the 8-row
// kernel with its ring's shared memory (8 stages of 18 KB, the slack, the
// barriers); calls of up to 16 do the same with boxes of 16 rows for the
// 16-row kernel.
// CHECK-LABEL: func.func @o_proj
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %[[M:.*]], %c8_i64 : i64
// CHECK: scf.if %[[FEW]] -> (i64)
// CHECK: symm_mem.tensor_map %{{.*}} box(128 x 64) : memref<2048x4096xbf16>
// CHECK: symm_mem.tensor_map %{{.*}} box(8 x 64)
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_wgmma8 blocks in (%c64, %{{.*}}, %{{.*}}) threads in (%c160, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c148640_i32 args(
// CHECK: arith.cmpi ule, %[[M]], %c16_i64 : i64
// CHECK: symm_mem.tensor_map %{{.*}} box(128 x 64) : memref<2048x4096xbf16>
// CHECK: symm_mem.tensor_map %{{.*}} box(16 x 64)
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_wgmma16 blocks in (%c64, %{{.*}}, %{{.*}}) threads in (%c160, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c165056_i32 args(
// CHECK-SAME: : i64, %{{.*}} : i64, %{{.*}} : i64)
func.func @o_proj(%x: memref<?x2048xbf16>, %w: memref<2048x4096xbf16>, %out: memref<?x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  // The group starts at the fill (its output's initial value).
  // expected-remark@+2 {{calls of 2 to 16 rows take the wgmma GEMV's 8-stage ring (its 8-row kernel, m64n8k16, for calls of up to 8): the register-streaming GEMV's grid is short (64 blocks, under 128)}}
  // expected-remark@+1 {{matmul 2048x4096: generated kernel @symm_matmul_0 (64x1 blocks of 512 threads, 111040 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 64x1 blocks of 512 threads) (up to 8 row(s): the GEMV @symm_matmul_0_wgmma8, 64x1 blocks of 160 threads) (up to 16 row(s): the GEMV @symm_matmul_0_wgmma16, 64x1 blocks of 160 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, 64x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_staged, 64x1 blocks of 512 threads), chosen against cuBLAS by measurement for up to 16 rows}}
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x4096xbf16>)
  linalg.matmul ins(%x, %w : memref<?x2048xbf16>, memref<2048x4096xbf16>) outs(%out : memref<?x4096xbf16>)
  return
}

// -----

// The down projection's two split-K slices: 64 x 2 = 128 blocks, not short.
// CHECK-LABEL: func.func @slices
// CHECK-NOT: _wgmma
// CHECK: return
func.func @slices(%a: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>, %p: memref<2x?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x7168xbf16>
  %as = memref.reinterpret_cast %a to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
      : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
  %ws = memref.reinterpret_cast %w to offset: [0], sizes: [2, 3584, 4096], strides: [14680064, 4096, 1]
      : memref<7168x4096xbf16> to memref<2x3584x4096xbf16>
  // expected-remark@+1 {{matmul in 2 split-K slices of 3584x4096: generated kernel}}
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
      outs(%p : memref<2x?x4096xf32>)
  return
}

// -----

// Two slices of 864 rows and 2048 columns make a short grid (32 x 2 = 64
// blocks), but 864 rows are not whole stages of 128: the register GEMV
// stays, and the remark says why.
// CHECK-LABEL: func.func @uneven_slices
// CHECK-NOT: _wgmma
// CHECK: return
func.func @uneven_slices(%a: memref<?x1728xbf16>, %w: memref<1728x2048xbf16>, %p: memref<2x?x2048xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x1728xbf16>
  %as = memref.reinterpret_cast %a to offset: [0], sizes: [2, %m, 864], strides: [864, 1728, 1]
      : memref<?x1728xbf16> to memref<2x?x864xbf16, strided<[864, 1728, 1]>>
  %ws = memref.reinterpret_cast %w to offset: [0], sizes: [2, 864, 2048], strides: [1769472, 2048, 1]
      : memref<1728x2048xbf16> to memref<2x864x2048xbf16>
  // expected-remark@+2 {{keeps the register-streaming GEMV for up to 16 rows although its grid is short (64 blocks): the wgmma GEMV cannot take it: split-K slices that are not whole wgmma stages of one matrix of rows (K = 864)}}
  // expected-remark@+1 {{matmul in 2 split-K slices of 864x2048: generated kernel}}
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x864xbf16, strided<[864, 1728, 1]>>, memref<2x864x2048xbf16>)
      outs(%p : memref<2x?x2048xf32>)
  return
}
