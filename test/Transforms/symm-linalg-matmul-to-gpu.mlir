// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' | FileCheck %s
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{row-scale=false})' 2>/dev/null | FileCheck %s --check-prefix=WHOLE
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-ahead=3})' 2>/dev/null | FileCheck %s --check-prefix=AHEAD
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{norm-in-loop=false})' 2>/dev/null | FileCheck %s --check-prefix=NOLOOP
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wave-sms=114})' 2>&1 >/dev/null | FileCheck %s --check-prefix=SMS114
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wave-sms=114})' 2>/dev/null | FileCheck %s --check-prefix=SMSATTR

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// The Llama MLP's first half at a TP-2 rank's widths: RMSNorm, the gate
// and up projections, SiLU(gate) * up. One generated kernel takes all of
// it (the norm as its prologue, the activation as its epilogue), behind a
// measured choice whose library branch keeps the ops as they were. The
// module records the SMs the kernels' grids were balanced over, which the
// entry points hand the runtime (convert-symm-mem-to-runtime).
// CHECK: module attributes {gpu.container_module, symm.gemv_sms = 132 : i64}
// SMSATTR: module attributes {gpu.container_module, symm.gemv_sms = 114 : i64}
// CHECK: gpu.module @symm_matmul_kernels
// CHECK: llvm.mlir.global external @__symm_dynamic_shared() {addr_space = 3 : i32, alignment = 128 : i64} : !llvm.array<0 x i8>
// CHECK-DAG: func.func private @symm_matmul_0_epilogue(%{{.*}}: bf16, %{{.*}}: bf16, %{{.*}}: bf16) -> bf16
// CHECK-DAG: func.func private @symm_matmul_0_step(%{{.*}}: bf16, %{{.*}}: f32) -> f32
// CHECK-DAG: func.func private @symm_matmul_0_prologue(%{{.*}}: bf16, %{{.*}}: f32, %{{.*}}: bf16, %{{.*}}: bf16) -> bf16
// RMSNorm is x * rsqrt(mean + eps) * w: the row factor and the column
// factors as functions of their own, for the tensor-core GEMV, which stages
// bf16(x * w) and scales each row's sums by rsqrt(mean + eps).
// CHECK: func.func private @symm_matmul_0_prologue_row(%{{.*}}: bf16, %[[STAT:.*]]: f32, %{{.*}}: bf16, %{{.*}}: bf16) -> f32
// CHECK: %[[MEAN:.*]] = arith.divf %[[STAT]]
// CHECK: %[[INV:.*]] = math.rsqrt
// CHECK: return %[[INV]] : f32
// CHECK: func.func private @symm_matmul_0_prologue_columns(%[[X:.*]]: bf16, %{{.*}}: f32, %[[W:.*]]: bf16, %{{.*}}: bf16) -> bf16
// CHECK-DAG: %[[XF:.*]] = arith.extf %[[X]] : bf16 to f32
// CHECK-DAG: %[[WF:.*]] = arith.extf %[[W]] : bf16 to f32
// CHECK: %[[XW:.*]] = arith.mulf %[[WF]], %[[XF]] : f32
// CHECK-NEXT: %[[STAGED:.*]] = arith.truncf %[[XW]] : f32 to bf16
// CHECK-NEXT: return %[[STAGED]] : bf16
// Without the option the GEMV applies the whole element function.
// WHOLE-NOT: @symm_matmul_0_prologue_{{row|columns}}
// WHOLE: gpu.func @symm_matmul_0_mma16(
// WHOLE: func.call @symm_matmul_0_step
// WHOLE: func.call @symm_matmul_0_prologue(
// WHOLE-NOT: @symm_matmul_0_prologue_{{row|columns}}
// CHECK: gpu.func @symm_matmul_0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: f32, %{{.*}}: !llvm.ptr) kernel
// CHECK: nvvm.mbarrier.init
// CHECK: nvvm.cp.async.shared.global {{.*}}, 16, cache = cg
// CHECK: nvvm.cp.async.mbarrier.arrive {{.*}} {noinc = true}
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.ldmatrix {{.*}} {eltType = #nvvm.ld_st_matrix_elt_type<b16>, layout = #nvvm.mma_layout<col>, num = 4 : i32, shape = #nvvm.ld_st_matrix_shape<m = 8, n = 8>}
// CHECK: nvvm.mma.sync A[{{.*}}] B[{{.*}}] C[{{.*}}] {layoutA = #nvvm.mma_layout<row>, layoutB = #nvvm.mma_layout<col>, multiplicandAPtxType = #nvvm.mma_type<bf16>, multiplicandBPtxType = #nvvm.mma_type<bf16>, shape = #nvvm.shape<m = 16, n = 8, k = 16>}
// CHECK: func.call @symm_matmul_0_epilogue
// The one-row GEMV of the same group, which takes the calls of one row
// without norm-in-loop (with it, only on short grids: the GEMV with the
// norm in its loop takes them here): same parameters; the row's column
// factors bf16(x * w) in shared memory (as f32) before the weight streams
// in by 16-byte loads that skip L1, 4 in flight, into f32 FMAs. Each
// thread loads its piece of the row once (16 bytes) and takes both its
// part of the statistic and the staged elements from it; the statistic's
// block sum waits until after the loop, where the row factor scales the
// sums. The pair, first in its function (nothing launches it early),
// prefetches nothing: there its prefetches measured slower.
// NOLOOP: gpu.func @symm_matmul_0_gemv1(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: f32, %{{.*}}: !llvm.ptr) kernel
// NOLOOP-NOT: nvvm.prefetch
// NOLOOP-COUNT-4: llvm.inline_asm "ld.global.L1::no_allocate.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l"
// NOLOOP: %[[PIECE:.*]] = scf.if %{{.*}} -> (vector<8xbf16>) {
// NOLOOP-NEXT: llvm.getelementptr
// NOLOOP-NEXT: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
// NOLOOP: func.call @symm_matmul_0_step
// NOLOOP-NOT: gpu.all_reduce
// NOLOOP: llvm.extractelement %[[PIECE]]
// NOLOOP: func.call @symm_matmul_0_prologue_columns
// NOLOOP: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xf32>, !llvm.ptr<3>
// NOLOOP-NEXT: }
// NOLOOP-NEXT: gpu.barrier
// NOLOOP: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (vector<8xf32>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// NOLOOP: math.fma
// NOLOOP: gpu.all_reduce add
// NOLOOP: gpu.barrier
// NOLOOP: %[[ROW_FACTOR:.*]] = func.call @symm_matmul_0_prologue_row(
// NOLOOP: arith.mulf %{{.*}}, %[[ROW_FACTOR]] : f32
// NOLOOP: func.call @symm_matmul_0_epilogue
// The GEMV on the tensor cores with the norm's pass before its loop, which
// calls of 2 to 16 rows take without norm-in-loop (with it, only the calls
// of 2 to 8 rows of short grids: @gate_up_wide below): two 16-row steps of the
// weight in flight (four 16-byte loads a lane each) while one warp per row
// reduces its statistic (shuffles) and stages the row's column factors
// bf16(x * w) in the same pass (no second pass over the rows); then per
// step, eight mma.sync of the lane's pieces, packed in pairs of rows,
// against the A fragment from shared memory; at the end each row's sums
// times its row factor, then the epilogue.
// NOLOOP: gpu.func @symm_matmul_0_mma16(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %{{.*}}: f32, %{{.*}}: !llvm.ptr) kernel
// NOLOOP-COUNT-8: llvm.inline_asm "ld.global.L1::no_allocate.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l"
// NOLOOP: %[[ELEMENT:.*]] = llvm.extractelement
// NOLOOP: func.call @symm_matmul_0_prologue_columns(%[[ELEMENT]],
// NOLOOP: func.call @symm_matmul_0_step
// NOLOOP: gpu.shuffle  xor %{{.*}}, %c16_i32{{.*}}, %c32_i32 : f32
// NOLOOP-NOT: func.call @symm_matmul_0_prologue(
// NOLOOP: %[[LOOP:.*]]:9 = scf.for {{.*}} -> (vector<32xf32>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// NOLOOP: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xi32>
// NOLOOP-COUNT-8: nvvm.mma.sync
// NOLOOP: gpu.barrier
// NOLOOP: llvm.store %[[LOOP]]#0, %{{.*}} {alignment = 16 : i64} : vector<32xf32>, !llvm.ptr<3>
// NOLOOP: %[[SCALE:.*]] = func.call @symm_matmul_0_prologue_row(
// NOLOOP: arith.mulf %{{.*}}, %[[SCALE]] : f32
// NOLOOP: func.call @symm_matmul_0_epilogue
// Its twin with the norm in its loop (norm-in-loop), which takes the calls
// of 2 to 16 rows here, where its 112 blocks cover most of the 132 SMs:
// the rows staged raw, in one pass of 16-byte loads (no statistic, no
// column factor), and the norm weight beside them, its load in flight with
// the rows'; in the loop each step's words of the lane's two rows come
// from shared memory, times the norm weight's four elements (the column
// factors) from shared memory too, and each element is a step of its row's
// statistic, carried with the accumulators; after the loop the quad's
// lanes sum their parts, the k-groups' parts meet in shared memory, and
// the statistic is the initial value plus them.
// CHECK: gpu.func @symm_matmul_0_mma16_norm_in_loop(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[NIL_INIT:.*]]: f32, %[[NIL_NORM:.*]]: !llvm.ptr) kernel
// CHECK-COUNT-8: llvm.inline_asm "ld.global.L1::no_allocate.v4.b32 {$0, $1, $2, $3}, [$4];", "=r,=r,=r,=r,l"
// CHECK-NOT: func.call
// CHECK: %[[NIL_NORM_AT:.*]] = llvm.getelementptr %[[NIL_NORM]][%{{.*}}] : (!llvm.ptr, i64) -> !llvm.ptr, bf16
// CHECK-NEXT: %[[NIL_NORM_PIECE:.*]] = llvm.load %[[NIL_NORM_AT]] {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
// CHECK-NOT: func.call
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
// CHECK-NOT: func.call
// CHECK: llvm.store %[[NIL_NORM_PIECE]], %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK-NOT: func.call
// CHECK: gpu.barrier
// CHECK: %[[NIL_LOOP:.*]]:11 = scf.for {{.*}} -> (vector<32xf32>, f32, f32, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// CHECK: %[[NIL_WORDS:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xi32>
// CHECK: %[[NIL_W:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<4xbf16>
// CHECK: %[[NIL_X:.*]] = llvm.bitcast %[[NIL_WORDS]] : vector<2xi32> to vector<4xbf16>
// CHECK: %[[NIL_X0:.*]] = llvm.extractelement %[[NIL_X]][%{{.*}} : i32] : vector<4xbf16>
// CHECK: %[[NIL_W0:.*]] = llvm.extractelement %[[NIL_W]][%{{.*}} : i32] : vector<4xbf16>
// CHECK: func.call @symm_matmul_0_prologue_columns(%[[NIL_X0]], %{{.*}}, %[[NIL_W0]], %{{.*}})
// CHECK: func.call @symm_matmul_0_step(%[[NIL_X0]], %{{.*}}) : (bf16, f32) -> f32
// CHECK-COUNT-8: nvvm.mma.sync
// CHECK: %[[NIL_S1:.*]], %{{.*}} = gpu.shuffle xor %[[NIL_LOOP]]#1, %c2_i32
// CHECK: arith.addf %[[NIL_LOOP]]#1, %[[NIL_S1]] : f32
// CHECK: gpu.shuffle xor %[[NIL_LOOP]]#2, %c2_i32
// CHECK: gpu.barrier
// CHECK: %[[NIL_PART:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK: arith.addf %[[NIL_INIT]], %[[NIL_PART]] : f32
// CHECK: %[[NIL_SCALE:.*]] = func.call @symm_matmul_0_prologue_row(
// CHECK: arith.mulf %{{.*}}, %[[NIL_SCALE]] : f32
// CHECK: func.call @symm_matmul_0_epilogue
// CHECK-LABEL: func.func @gate_up
// CHECK-SAME: (%[[X:.*]]: memref<?x4096xbf16>, %[[NORM:.*]]: memref<4096xbf16>, %[[WG:.*]]: memref<4096x7168xbf16>, %[[WU:.*]]: memref<4096x7168xbf16>, %[[ACT:.*]]: memref<?x7168xbf16>)
// CHECK: memref.dim %[[X]]
// CHECK: %[[M:.*]] = memref.dim %[[X]], %{{.*}} : memref<?x4096xbf16>
// CHECK-DAG: memref.extract_aligned_pointer_as_index %[[X]]
// CHECK-DAG: memref.extract_aligned_pointer_as_index %[[WG]]
// CHECK-DAG: memref.extract_aligned_pointer_as_index %[[WU]]
// CHECK-DAG: memref.extract_aligned_pointer_as_index %[[ACT]]
// CHECK-DAG: memref.extract_aligned_pointer_as_index %[[NORM]]
// The kernels move 16-byte vectors: a call whose operands are not all
// 16-byte aligned takes the library's branch, and is not measured.
// CHECK: %[[LOW:.*]] = arith.andi %{{.*}}, %c15_i64 : i64
// CHECK: %[[ALIGNED:.*]] = arith.cmpi eq, %[[LOW]], %c0_i64 : i64
// CHECK-NEXT: %[[ROUNDS:.*]] = scf.if %[[ALIGNED]] -> (index) {
// CHECK-NEXT: %[[MEASURED:.*]] = symm_mem.kernel_rounds site({{[0-9]+}}) rows(%[[M]]) max_rows(16)
// CHECK-NEXT: scf.yield %[[MEASURED]] : index
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[ONCE:.*]] = arith.constant 1 : index
// CHECK-NEXT: scf.yield %[[ONCE]] : index
// CHECK: scf.for %[[ROUND:.*]] = %{{.*}} to %[[ROUNDS]] step %{{.*}} {
// CHECK-NEXT: %[[GENERATED:.*]] = scf.if %[[ALIGNED]] -> (i1) {
// CHECK-NEXT: %[[WAY:.*]] = symm_mem.kernel_variant site({{[0-9]+}}) rows(%[[M]]) round(%[[ROUND]]) max_rows(16)
// CHECK-NEXT: scf.yield %[[WAY]] : i1
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[LIBRARY:.*]] = arith.constant false
// CHECK-NEXT: scf.yield %[[LIBRARY]] : i1
// CHECK: scf.if %[[GENERATED]] {
// Up to 16 rows (one too) take the tensor-core GEMV with the norm in its
// loop, more the tensor-core kernel. Without norm-in-loop one row takes the
// one-row GEMV and the kernel with the pass before its loop takes 2 to 16.
// NOLOOP-NOT: gpu.func @symm_matmul_0_mma16_norm_in_loop
// NOLOOP-LABEL: func.func @gate_up
// NOLOOP: %[[ONE_ROW:.*]] = arith.cmpi ule, %{{.*}}, %c1_i64 : i64
// NOLOOP: scf.if %[[ONE_ROW]] {
// NOLOOP: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1 blocks
// NOLOOP: %[[FEW:.*]] = arith.cmpi ule, %{{.*}}, %c16_i64 : i64
// NOLOOP: scf.if %[[FEW]] {
// NOLOOP: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16 blocks
// CHECK-NOT: @symm_matmul_0_gemv1 blocks
// CHECK-NOT: @symm_matmul_0_mma16 blocks
// CHECK: %[[FEW:.*]] = arith.cmpi ule, %{{.*}}, %c16_i64 : i64
// CHECK: scf.if %[[FEW]] {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16_norm_in_loop blocks
// CHECK: } else {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0 blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %{{.*}} args(
// CHECK: } else {
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %[[WG]]
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %[[WU]]
// CHECK: linalg.generic
// CHECK: }
// CHECK: scf.if %[[ALIGNED]] {
// CHECK-NEXT: symm_mem.kernel_variant_end site({{[0-9]+}}) rows(%[[M]]) round(%[[ROUND]])
func.func @gate_up(%x: memref<?x4096xbf16>, %norm: memref<4096xbf16>,
                   %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
                   %act: memref<?x7168xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 4096.0 : f32
  %sum_sq = memref.alloc(%m) : memref<?xf32>
  // expected-remark@+1 {{matmul pair (4096x7168 per weight) with the row-norm prologue (its row factor applied to the sums) with the element-wise epilogue: generated kernel @symm_matmul_0 (112x1 blocks of 512 threads, 209344 bytes of shared memory, 3 stages of 256 rows) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_norm_in_loop, 112x1 blocks of 512 threads)}}
  linalg.fill ins(%zero : f32) outs(%sum_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%sum_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %xn = memref.alloc(%m) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum_sq, %norm : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
      outs(%xn : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %s: f32, %w: bf16, %unused: bf16):
    %mean = arith.divf %s, %hidden : f32
    %var = arith.addf %mean, %eps : f32
    %inv = math.rsqrt %var : f32
    %f = arith.extf %v : bf16 to f32
    %n = arith.mulf %f, %inv : f32
    %wf = arith.extf %w : bf16 to f32
    %y = arith.mulf %n, %wf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  %gate = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%gate : memref<?x7168xbf16>)
  %up = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%up : memref<?x7168xbf16>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x7168xbf16>, memref<?x7168xbf16>)
      outs(%act : memref<?x7168xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %unused: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %neg = arith.negf %gf : f32
    %e = math.exp %neg : f32
    %den = arith.addf %e, %one : f32
    %silu = arith.divf %gf, %den : f32
    %y = arith.mulf %silu, %uf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %sum_sq : memref<?xf32>
  memref.dealloc %xn : memref<?x4096xbf16>
  memref.dealloc %gate : memref<?x7168xbf16>
  memref.dealloc %up : memref<?x7168xbf16>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// The same pair at hidden size 6656 (LLaMA-30B): its 16 staged rows
// would fit (213.6 KB), but would leave the SM the 228 KB step of shared
// memory and 28 KB of L1, where the GEMV's loads in flight read slower
// (bench/results/2026-11-28-l1-carveout-h200.md), so it streams its
// norm as at 8192: the loop carries the rows' words with the weight. The
// norm weight it stages, as at 8192.
// CHECK-LABEL: gpu.func @symm_matmul_0_mma16
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.for {{.*}} -> (vector<32xf32>, f32, f32, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<2xi32>, vector<2xi32>,
// CHECK: nvvm.mma.sync
func.func @gate_up_l1(%x: memref<?x6656xbf16>, %norm: memref<6656xbf16>,
                   %wg: memref<6656x7168xbf16>, %wu: memref<6656x7168xbf16>,
                   %act: memref<?x7168xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x6656xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 6656.0 : f32
  %sum_sq = memref.alloc(%m) : memref<?xf32>
  // expected-remark@+2 {{the GEMV for up to 16 rows applies the norm as it reads the rows: staged, 16 rows of K = 6656 would take 213568 bytes of shared memory, which leaves the weight's loads in flight too little L1 (above 199680)}}
  // expected-remark@+1 {{matmul pair (6656x7168 per weight) with the row-norm prologue (its row factor applied to the sums) with the element-wise epilogue: generated kernel @symm_matmul_0 (112x1 blocks of 512 threads, 209344 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 112x1 blocks of 1024 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16, 112x1 blocks of 512 threads), chosen against cuBLAS by measurement for up to 16 rows whose operands are 16-byte aligned (others take cuBLAS)}}
  linalg.fill ins(%zero : f32) outs(%sum_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x6656xbf16>) outs(%sum_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %xn = memref.alloc(%m) : memref<?x6656xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum_sq, %norm : memref<?x6656xbf16>, memref<?xf32>, memref<6656xbf16>)
      outs(%xn : memref<?x6656xbf16>) {
  ^bb0(%v: bf16, %s: f32, %w: bf16, %unused: bf16):
    %mean = arith.divf %s, %hidden : f32
    %var = arith.addf %mean, %eps : f32
    %inv = math.rsqrt %var : f32
    %f = arith.extf %v : bf16 to f32
    %n = arith.mulf %f, %inv : f32
    %wf = arith.extf %w : bf16 to f32
    %y = arith.mulf %n, %wf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  %gate = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x6656xbf16>, memref<6656x7168xbf16>)
                outs(%gate : memref<?x7168xbf16>)
  %up = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x6656xbf16>, memref<6656x7168xbf16>)
                outs(%up : memref<?x7168xbf16>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x7168xbf16>, memref<?x7168xbf16>)
      outs(%act : memref<?x7168xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %unused: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %neg = arith.negf %gf : f32
    %e = math.exp %neg : f32
    %den = arith.addf %e, %one : f32
    %silu = arith.divf %gf, %den : f32
    %y = arith.mulf %silu, %uf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %sum_sq : memref<?xf32>
  memref.dealloc %xn : memref<?x6656xbf16>
  memref.dealloc %gate : memref<?x7168xbf16>
  memref.dealloc %up : memref<?x7168xbf16>
  return
}

// -----

// The same block at a TP-2 rank of Qwen2.5-7B (hidden 3584, 9472 of the
// MLP's 18944): 148 bands of 64 columns would run a wave of 132 blocks
// and a second of 16, so both GEMVs take 128-column bands with half the
// k-groups (the same threads): one wave of 74 blocks (on 2x H200 the pair
// took 43.1 instead of 53.9 µs at 16 rows; bench/results/2026-11-28-widths-h200x2.md).
// CHECK-LABEL: func.func @gate_up_wide
// CHECK: %[[BANDS:.*]] = arith.constant 74 : index
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1 blocks in (%[[BANDS]], %{{.*}}, %{{.*}}) threads in
// Its 74 blocks cover too few of the 132 SMs for the GEMV with the norm in
// its loop to take the calls of 2 to 8 rows: those keep the pass before the
// loop, and the twin takes 9 to 16.
// CHECK: %[[EIGHT:.*]] = arith.cmpi ule, %{{.*}}, %c8_i64 : i64
// CHECK: scf.if %[[EIGHT]] {
// CHECK: %[[BANDS16:.*]] = arith.constant 74 : index
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16 blocks in (%[[BANDS16]], %{{.*}}, %{{.*}}) threads in
// CHECK: } else {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16_norm_in_loop blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @gate_up_wide(%x: memref<?x3584xbf16>, %norm: memref<3584xbf16>,
                   %wg: memref<3584x9472xbf16>, %wu: memref<3584x9472xbf16>,
                   %act: memref<?x9472xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x3584xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 3584.0 : f32
  %sum_sq = memref.alloc(%m) : memref<?xf32>
  // expected-remark@+1 {{matmul pair (3584x9472 per weight) with the row-norm prologue (its row factor applied to the sums) with the element-wise epilogue: generated kernel @symm_matmul_0 (148x1 blocks of 512 threads, 209344 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 74x1 blocks of 1024 threads, in 128-column bands: 64-column ones would take 148 blocks, a wave of 132 SMs and part of another) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, 74x1 blocks of 512 threads, in 128-column bands: 64-column ones would take 148 blocks, a wave of 132 SMs and part of another) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_norm_in_loop, 74x1 blocks of 512 threads, in 128-column bands: 64-column ones would take 148 blocks, a wave of 132 SMs and part of another), chosen against cuBLAS by measurement for up to 16 rows whose operands are 16-byte aligned (others take cuBLAS)}}
  linalg.fill ins(%zero : f32) outs(%sum_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x3584xbf16>) outs(%sum_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %xn = memref.alloc(%m) : memref<?x3584xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum_sq, %norm : memref<?x3584xbf16>, memref<?xf32>, memref<3584xbf16>)
      outs(%xn : memref<?x3584xbf16>) {
  ^bb0(%v: bf16, %s: f32, %w: bf16, %unused: bf16):
    %mean = arith.divf %s, %hidden : f32
    %var = arith.addf %mean, %eps : f32
    %inv = math.rsqrt %var : f32
    %f = arith.extf %v : bf16 to f32
    %n = arith.mulf %f, %inv : f32
    %wf = arith.extf %w : bf16 to f32
    %y = arith.mulf %n, %wf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  %gate = memref.alloc(%m) : memref<?x9472xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x9472xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x3584xbf16>, memref<3584x9472xbf16>)
                outs(%gate : memref<?x9472xbf16>)
  %up = memref.alloc(%m) : memref<?x9472xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x9472xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x3584xbf16>, memref<3584x9472xbf16>)
                outs(%up : memref<?x9472xbf16>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x9472xbf16>, memref<?x9472xbf16>)
      outs(%act : memref<?x9472xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %unused: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %neg = arith.negf %gf : f32
    %e = math.exp %neg : f32
    %den = arith.addf %e, %one : f32
    %silu = arith.divf %gf, %den : f32
    %y = arith.mulf %silu, %uf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %sum_sq : memref<?xf32>
  memref.dealloc %xn : memref<?x3584xbf16>
  memref.dealloc %gate : memref<?x9472xbf16>
  memref.dealloc %up : memref<?x9472xbf16>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// The same pair at hidden size 8192 (Llama-3-70B): 16 normalized rows of
// K = 8192 do not fit in shared memory staged, so the tensor-core GEMV
// applies the norm as it reads `a` (stream-norm): each step's words of a
// lane's two rows are loaded with the weight, a step ahead, and carried
// with the lane's parts of the two rows' statistics; the column factors
// and the statistic's steps come from the same four elements. The block
// stages the norm weight in shared memory (16-byte pieces) while its
// first steps are in flight, and the loop reads its four elements there.
// CHECK-LABEL: gpu.func @symm_matmul_0_mma16
// CHECK-SAME: (%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64, %[[INIT:.*]]: f32, %[[NORM:.*]]: !llvm.ptr)
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: %[[LOOP:.*]]:15 = scf.for {{.*}} -> (vector<32xf32>, f32, f32, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<2xi32>, vector<2xi32>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<2xi32>, vector<2xi32>)
// CHECK: %[[W:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<4xbf16>
// CHECK: %[[X:.*]] = llvm.bitcast %{{.*}} : vector<2xi32> to vector<4xbf16>
// CHECK: %[[X0:.*]] = llvm.extractelement %[[X]][%{{.*}} : i32] : vector<4xbf16>
// CHECK: %[[W0:.*]] = llvm.extractelement %[[W]][%{{.*}} : i32] : vector<4xbf16>
// CHECK: func.call @symm_matmul_0_prologue_columns(%[[X0]], %{{.*}}, %[[W0]], %{{.*}})
// CHECK: func.call @symm_matmul_0_step(%[[X0]], %{{.*}}) : (bf16, f32) -> f32
// CHECK: nvvm.mma.sync
// After the loop the quad's four lanes sum their parts of a row.
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle xor %[[LOOP]]#1, %c2_i32
// CHECK: %[[S2:.*]] = arith.addf %[[LOOP]]#1, %[[S1]] : f32
// CHECK: gpu.shuffle xor %[[S2]], %c1_i32
// CHECK: gpu.shuffle xor %[[LOOP]]#2, %c2_i32
// The statistic is the initial value plus the k-groups' parts.
// CHECK: gpu.barrier
// CHECK: %[[PART:.*]] = llvm.load %{{.*}} {alignment = 4 : i64} : !llvm.ptr<3> -> f32
// CHECK: %[[STAT:.*]] = arith.addf %[[INIT]], %[[PART]] : f32
// CHECK: func.call @symm_matmul_0_prologue_row(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
func.func @gate_up_wide(%x: memref<?x8192xbf16>, %norm: memref<8192xbf16>,
                   %wg: memref<8192x7168xbf16>, %wu: memref<8192x7168xbf16>,
                   %act: memref<?x7168xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x8192xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 8192.0 : f32
  %sum_sq = memref.alloc(%m) : memref<?xf32>
  // expected-remark@+2 {{the GEMV for up to 16 rows applies the norm as it reads the rows: staged, 16 rows of K = 8192 do not fit in shared memory}}
  // expected-remark@+1 {{matmul pair (8192x7168 per weight) with the row-norm prologue (its row factor applied to the sums) with the element-wise epilogue: generated kernel @symm_matmul_0 (112x1 blocks of 512 threads, 209344 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 112x1 blocks of 1024 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16, 112x1 blocks of 512 threads)}}
  linalg.fill ins(%zero : f32) outs(%sum_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x8192xbf16>) outs(%sum_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %xn = memref.alloc(%m) : memref<?x8192xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum_sq, %norm : memref<?x8192xbf16>, memref<?xf32>, memref<8192xbf16>)
      outs(%xn : memref<?x8192xbf16>) {
  ^bb0(%v: bf16, %s: f32, %w: bf16, %unused: bf16):
    %mean = arith.divf %s, %hidden : f32
    %var = arith.addf %mean, %eps : f32
    %inv = math.rsqrt %var : f32
    %f = arith.extf %v : bf16 to f32
    %n = arith.mulf %f, %inv : f32
    %wf = arith.extf %w : bf16 to f32
    %y = arith.mulf %n, %wf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  %gate = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x8192xbf16>, memref<8192x7168xbf16>)
                outs(%gate : memref<?x7168xbf16>)
  %up = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x8192xbf16>, memref<8192x7168xbf16>)
                outs(%up : memref<?x7168xbf16>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x7168xbf16>, memref<?x7168xbf16>)
      outs(%act : memref<?x7168xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %unused: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %neg = arith.negf %gf : f32
    %e = math.exp %neg : f32
    %den = arith.addf %e, %one : f32
    %silu = arith.divf %gf, %den : f32
    %y = arith.mulf %silu, %uf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %sum_sq : memref<?xf32>
  memref.dealloc %xn : memref<?x8192xbf16>
  memref.dealloc %gate : memref<?x7168xbf16>
  memref.dealloc %up : memref<?x7168xbf16>
  return
}

// -----

// Split-K slices of a down projection (as symm-mem-expand-collectives
// writes them for the all-reduce to sum): one generated kernel, a block
// row per slice.
// CHECK: gpu.func @symm_matmul_0(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64) kernel
// CHECK: nvvm.mma.sync
// Its one-row GEMV reads a slice's 3584 rows 2 at a time per thread, no
// prologue; its row of `a` in 16-byte pieces, one per thread. First, the
// lines of each thread's first 16 rows go towards L2 (two prefetches a
// thread; symm-wait-for-prior-grids puts its wait after them).
// CHECK: gpu.func @symm_matmul_0_gemv1(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64) kernel
// CHECK-COUNT-2: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK-NOT: func.call
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
// CHECK-NOT: func.call
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xf32>, !llvm.ptr<3>
// CHECK: scf.for {{.*}} -> (vector<8xf32>, vector<8xbf16>, vector<8xbf16>)
// Its tensor-core GEMV reads the rows of `a` from global memory (no
// prologue to stage them through), zero past the call's rows.
// Its first 8 steps' lines go towards L2 first (4 prefetches a lane).
// CHECK: gpu.func @symm_matmul_0_mma16(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: i64) kernel
// CHECK-COUNT-4: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK-NOT: gpu.shuffle
// CHECK: scf.for {{.*}} -> (vector<32xf32>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// CHECK: scf.if %{{.*}} -> (vector<2xi32>) {
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr -> vector<2xi32>
// CHECK: } else {
// CHECK-COUNT-8: nvvm.mma.sync
// Calls of 9 to 16 rows take a second tensor-core GEMV, which stages the
// 16 rows of its slice of `a` in shared memory first (16-byte pieces, all
// of a thread's loads in flight at once) and reads its fragments there.
// CHECK-LABEL: gpu.func @symm_matmul_0_mma16_staged
// CHECK-COUNT-4: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %c7168_i64 step
// CHECK-COUNT-14: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr -> vector<8xbf16>
// CHECK: llvm.store %{{.*}} {alignment = 16 : i64} : vector<8xbf16>, !llvm.ptr<3>
// CHECK: gpu.barrier
// CHECK: scf.for {{.*}} -> (vector<32xf32>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>, vector<8xbf16>)
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xi32>
// CHECK-COUNT-8: nvvm.mma.sync
// With mma-gemv-ahead = 3 the loop (two steps in flight a warp) also
// prefetches the lines of the warp's steps 3 past those its loads fetch:
// in iteration j, its step i = 2 j (k-groups 16) plus 2 + 3 (lanes 0-15)
// or 6 (lanes 16-31), row lane % 16 of it, clamped to the slice's 3584.
// AHEAD-LABEL: gpu.func @symm_matmul_0_mma16_staged
// AHEAD-COUNT-4: nvvm.prefetch level = L2
// AHEAD: scf.for %[[J:.*]] = %{{.*}} to %c7_i64 step %{{.*}} iter_args
// AHEAD: %[[I:.*]] = arith.muli %[[J]], %c2_i64
// AHEAD: %[[FIRST:.*]] = arith.addi %[[I]], %c0_i64
// AHEAD: %[[AHEAD:.*]] = arith.addi %[[FIRST]], %c5_i64
// AHEAD: %[[OWN:.*]] = arith.addi %[[AHEAD]], %[[HALF:.*]] : i64
// AHEAD: %[[STEPS:.*]] = arith.muli %[[OWN]], %c16_i64
// AHEAD: arith.minui %{{.*}}, %c3583_i64
// AHEAD: nvvm.prefetch level = L2
// AHEAD-NOT: nvvm.prefetch
// AHEAD-COUNT-8: nvvm.mma.sync
// AHEAD-NOT: nvvm.prefetch
// AHEAD: scf.yield
// CHECK-LABEL: func.func @slices
// CHECK-SAME: (%[[A:.*]]: memref<?x7168xbf16>, %[[W:.*]]: memref<7168x4096xbf16>, %[[P:.*]]: memref<2x?x4096xf32>)
// CHECK: %[[AS:.*]] = memref.reinterpret_cast %[[A]]
// CHECK: %[[WS:.*]] = memref.reinterpret_cast %[[W]]
// CHECK: %[[M:.*]] = memref.dim %[[AS]], %{{.*}} : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
// CHECK: symm_mem.kernel_rounds site({{[0-9]+}}) rows(%[[M]]) max_rows(16)
// CHECK: %[[ONE:.*]] = arith.cmpi ule, %[[ROWS:.*]], %c1_i64 : i64
// CHECK: scf.if %[[ONE]] {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1 blocks in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[EIGHT:.*]] = arith.cmpi ule, %[[ROWS]], %c8_i64 : i64
// CHECK: scf.if %[[EIGHT]] {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16 blocks in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: %[[SIXTEEN:.*]] = arith.cmpi ule, %[[ROWS]], %c16_i64 : i64
// CHECK: scf.if %[[SIXTEEN]] {
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16_staged blocks in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0 blocks in (%{{.*}}, %{{.*}}, %{{.*}})
// CHECK: } else {
// CHECK-NEXT: linalg.batch_matmul {symm.overwrites} ins(%[[AS]], %[[WS]]
// Built for H100 PCIe's 114 SMs (wave-sms), the tensor-core GEMVs' 128
// blocks would take a second wave of 14: they take 128-column bands, 64
// blocks (the one-row CUDA-core GEMV keeps its narrow blocks).
// SMS114: remark: matmul in 2 split-K slices of 3584x4096: {{.*}}(up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 64x2 blocks of 512 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, 32x2 blocks of 512 threads, in 128-column bands: 64-column ones would take 128 blocks, a wave of 114 SMs and part of another) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_staged, 32x2 blocks of 512 threads, in 128-column bands: 64-column ones would take 128 blocks, a wave of 114 SMs and part of another)
func.func @slices(%a: memref<?x7168xbf16>, %w: memref<7168x4096xbf16>, %p: memref<2x?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x7168xbf16>
  %as = memref.reinterpret_cast %a to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
      : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
  %ws = memref.reinterpret_cast %w to offset: [0], sizes: [2, 3584, 4096], strides: [14680064, 4096, 1]
      : memref<7168x4096xbf16> to memref<2x3584x4096xbf16>
  // expected-remark@+1 {{matmul in 2 split-K slices of 3584x4096: generated kernel @symm_matmul_0 (64x2 blocks of 512 threads, 111040 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 64x2 blocks of 512 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma16, 64x2 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_staged, 64x2 blocks of 512 threads)}}
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
      outs(%p : memref<2x?x4096xf32>)
  return
}

// -----

// A single matmul that reads the pair's output (the MLP's down projection
// after gate/up): the pair's GEMV runs just before its own, so its measured
// choice is marked `after_gemv` with the pair's site (the runtime credits
// the early launch where the pair took its generated kernel);
// the pair, which reads the function's input, is not. The pair, without a
// prologue, stages its rows for every call of 2 to 16 rows (`mma16_staged`;
// a lone matmul's split-K slices read them from global memory up to 8 rows,
// @slices above).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @mlp
// CHECK: symm_mem.kernel_rounds site([[PAIR:[0-9]+]]) rows(%{{.*}}) max_rows(16){{$}}
// CHECK: symm_mem.kernel_rounds site({{[0-9]+}}) rows(%{{.*}}) max_rows(16) after_gemv([[PAIR]]){{$}}
func.func @mlp(%xn: memref<?x4096xbf16>, %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
               %wd: memref<7168x4096xbf16>, %out: memref<?x4096xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %xn, %c0 : memref<?x4096xbf16>
  %one = arith.constant 1.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %gate = memref.alloc(%m) : memref<?x7168xbf16>
  // expected-remark@+1 {{matmul pair (4096x7168 per weight) with the element-wise epilogue: generated kernel @symm_matmul_0 (112x1 blocks of 512 threads, 209344 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 112x1 blocks of 1024 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16_staged, 112x1 blocks of 512 threads), chosen}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%gate : memref<?x7168xbf16>)
  %up = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%up : memref<?x7168xbf16>)
  %act = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x7168xbf16>, memref<?x7168xbf16>)
      outs(%act : memref<?x7168xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %unused: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %neg = arith.negf %gf : f32
    %e = math.exp %neg : f32
    %den = arith.addf %e, %one : f32
    %silu = arith.divf %gf, %den : f32
    %y = arith.mulf %silu, %uf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  // expected-remark@+1 {{matmul 7168x4096}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%out : memref<?x4096xbf16>)
  linalg.matmul ins(%act, %wd : memref<?x7168xbf16>, memref<7168x4096xbf16>)
                outs(%out : memref<?x4096xbf16>)
  memref.dealloc %gate : memref<?x7168xbf16>
  memref.dealloc %up : memref<?x7168xbf16>
  memref.dealloc %act : memref<?x7168xbf16>
  return
}

// -----

// A matmul that reads its lhs transposed (a^T w) is not the product the
// kernels compute: it keeps cuBLAS (a strided GEMM with the layout code:
// convert-symm-mem-to-runtime.mlir).
// CHECK-LABEL: func.func @transposed_lhs
// CHECK-NOT: symm_matmul
// CHECK: linalg.matmul
// CHECK-NOT: symm_matmul
func.func @transposed_lhs(%x: memref<4096x16xbf16>, %w: memref<4096x4096xbf16>,
                          %out: memref<16x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%out : memref<16x4096xbf16>)
  // expected-remark@+1 {{keeps cuBLAS: reads its inputs transposed_a; the generated kernels read a as m x k and b as k x n, row-major}}
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d2, d0)>,
                                 affine_map<(d0, d1, d2) -> (d2, d1)>,
                                 affine_map<(d0, d1, d2) -> (d0, d1)>]
    ins(%x, %w : memref<4096x16xbf16>, memref<4096x4096xbf16>) outs(%out : memref<16x4096xbf16>)
  return
}



// -----

// A weight in nn.Linear's layout (n x k: x @ W^T) is read along its rows
// by the CUDA-core GEMV for one row (gemv_linear) and by the tensor-core
// GEMVs with the mma's operands swapped (gemv_mma_linear), a lone matmul's
// for up to 8 rows and for up to 16, its warps 32 columns each: the
// generated branch takes calls of up to 16 rows (max_rows(16)), each the
// first kernel that holds it, and the library keeps the rest. No tiled
// tensor-core kernel is built. One whose K is not a multiple of 8 (its
// rows' 16-byte pieces) keeps cuBLAS, and says why. Each GEMV of the lone
// matmul first sends its weight's first lines towards L2, before its wait
// for the grid before it: the one-row GEMV 8 steps (a line a thread each),
// the tensor-core ones 4 iterations (a line of each of the warp's 32 rows
// each, one a lane).
// CHECK-LABEL: gpu.module @symm_matmul_kernels
// CHECK-NOT: gpu.func @symm_matmul_0(
// CHECK: gpu.func @symm_matmul_0_gemv1(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64) kernel attributes {{{.*}}nvvm.reqntid = array<i32: 256, 1, 1>}
// CHECK-COUNT-8: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: gpu.func @symm_matmul_0_mma8(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64) kernel attributes {{{.*}}nvvm.reqntid = array<i32: 512, 1, 1>}
// CHECK-COUNT-4: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: nvvm.mma.sync
// CHECK: gpu.func @symm_matmul_0_mma16(%{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i64) kernel attributes {{{.*}}nvvm.reqntid = array<i32: 512, 1, 1>}
// CHECK-COUNT-4: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: nvvm.mma.sync
// CHECK-NOT: gpu.func @symm_matmul_0(
// CHECK-LABEL: func.func @linear_weight
// CHECK: %[[ROWS:.*]] = symm_mem.kernel_rounds site({{[0-9]+}}) rows(%{{.*}}) max_rows(16)
// CHECK: %[[ONE:.*]] = arith.cmpi ule, %[[M:.*]], %c1_i64{{[_0-9]*}} : i64
// CHECK: scf.if %[[ONE]] {
// CHECK:   gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1 blocks in (%c224{{[_0-9]*}}, %{{.*}}, %{{.*}}) threads in (%c256{{[_0-9]*}},
// CHECK: } else {
// CHECK:   %[[EIGHT:.*]] = arith.cmpi ule, %[[M]], %c8_i64{{[_0-9]*}} : i64
// CHECK:   scf.if %[[EIGHT]] {
// CHECK:     gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma8 blocks in (%c224{{[_0-9]*}}, %{{.*}}, %{{.*}}) threads in (%c512{{[_0-9]*}},
// CHECK:   } else {
// CHECK-NOT: scf.if
// CHECK:     gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16 blocks in (%c224{{[_0-9]*}}, %{{.*}}, %{{.*}}) threads in (%c512{{[_0-9]*}},
// CHECK-NOT: gpu.launch_func
// CHECK: linalg.matmul indexing_maps
// CHECK-LABEL: func.func @linear_odd_k
// CHECK-NOT: gpu.launch_func
func.func @linear_weight(%x: memref<?x4096xbf16>, %w: memref<7168x4096xbf16>,
                         %out: memref<?x7168xbf16>) {
  %zero = arith.constant 0.0 : bf16
  // expected-remark@+1 {{matmul 4096x7168, the weights stored n x k: generated GEMVs (up to 1 row(s): the GEMV @symm_matmul_0_gemv1, 224x1 blocks of 256 threads) (up to 8 row(s): the GEMV @symm_matmul_0_mma8, 224x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_0_mma16, 224x1 blocks of 512 threads), chosen against cuBLAS by measurement for up to 16 rows whose operands are 16-byte aligned (others take cuBLAS; n x k weights take no tiled tensor-core kernel)}}
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x7168xbf16>)
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4096xbf16>, memref<7168x4096xbf16>) outs(%out : memref<?x7168xbf16>)
  return
}
func.func @linear_odd_k(%x: memref<?x4100xbf16>, %w: memref<7168x4100xbf16>,
                        %out: memref<?x7168xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x7168xbf16>)
  // expected-remark@+1 {{keeps cuBLAS: K = 4100 is not a multiple of 8}}
  linalg.matmul indexing_maps = [affine_map<(m, n, k) -> (m, k)>,
                                 affine_map<(m, n, k) -> (n, k)>,
                                 affine_map<(m, n, k) -> (m, n)>]
    ins(%x, %w : memref<?x4100xbf16>, memref<7168x4100xbf16>) outs(%out : memref<?x7168xbf16>)
  return
}

// -----

// A merged gate_up weight in nn.Linear's layout (2F x K, vLLM's
// MergedColumnParallelLinear) read as its two row halves: each half is a
// whole row-major matrix at an offset, so the pair takes its GEMVs; the
// launch passes the up half's address moved by its offset (F K = 1024 x 64
// elements, 131072 bytes). The column halves of a row-major k x 2F weight
// are not whole matrices (rows 2F apart): that pair keeps cuBLAS.
// CHECK-LABEL: func.func @merged_halves
// CHECK: %[[UP:.*]] = memref.extract_aligned_pointer_as_index %{{.*}} : memref<1024x64xbf16, strided<[64, 1], offset: 65536>> -> index
// CHECK-NEXT: %[[UP64:.*]] = arith.index_cast %[[UP]] : index to i64
// CHECK-NEXT: %[[SHIFT:.*]] = arith.constant 131072 : i64
// CHECK-NEXT: arith.addi %[[UP64]], %[[SHIFT]] : i64
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1
// CHECK-LABEL: func.func @column_halves
// CHECK-NOT: gpu.launch_func
#mh_a = affine_map<(m, n, k) -> (m, k)>
#mh_b = affine_map<(m, n, k) -> (n, k)>
#mh_c = affine_map<(m, n, k) -> (m, n)>
#mh_id = affine_map<(d0, d1) -> (d0, d1)>
func.func @merged_halves(%x: memref<?x64xbf16>, %w: memref<2048x64xbf16>, %act: memref<?x1024xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %wg = memref.subview %w[0, 0] [1024, 64] [1, 1] : memref<2048x64xbf16> to memref<1024x64xbf16, strided<[64, 1]>>
  %wu = memref.subview %w[1024, 0] [1024, 64] [1, 1] : memref<2048x64xbf16> to memref<1024x64xbf16, strided<[64, 1], offset: 65536>>
  %g = memref.alloc(%m) : memref<?x1024xbf16>
  // expected-remark@+1 {{matmul pair (64x1024 per weight) with the element-wise epilogue, the weights stored n x k: generated GEMVs}}
  linalg.fill ins(%zero : bf16) outs(%g : memref<?x1024xbf16>)
  linalg.matmul indexing_maps = [#mh_a, #mh_b, #mh_c]
    ins(%x, %wg : memref<?x64xbf16>, memref<1024x64xbf16, strided<[64, 1]>>) outs(%g : memref<?x1024xbf16>)
  %u = memref.alloc(%m) : memref<?x1024xbf16>
  linalg.fill ins(%zero : bf16) outs(%u : memref<?x1024xbf16>)
  linalg.matmul indexing_maps = [#mh_a, #mh_b, #mh_c]
    ins(%x, %wu : memref<?x64xbf16>, memref<1024x64xbf16, strided<[64, 1], offset: 65536>>) outs(%u : memref<?x1024xbf16>)
  linalg.generic {indexing_maps = [#mh_id, #mh_id, #mh_id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : memref<?x1024xbf16>, memref<?x1024xbf16>) outs(%act : memref<?x1024xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %p = arith.mulf %a, %b : bf16
    linalg.yield %p : bf16
  }
  memref.dealloc %g : memref<?x1024xbf16>
  memref.dealloc %u : memref<?x1024xbf16>
  return
}
func.func @column_halves(%x: memref<?x64xbf16>, %w: memref<64x2048xbf16>, %act: memref<?x1024xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %wg = memref.subview %w[0, 0] [64, 1024] [1, 1] : memref<64x2048xbf16> to memref<64x1024xbf16, strided<[2048, 1]>>
  %wu = memref.subview %w[0, 1024] [64, 1024] [1, 1] : memref<64x2048xbf16> to memref<64x1024xbf16, strided<[2048, 1], offset: 1024>>
  %g = memref.alloc(%m) : memref<?x1024xbf16>
  linalg.fill ins(%zero : bf16) outs(%g : memref<?x1024xbf16>)
  // expected-remark@+1 {{keeps cuBLAS: the pair's operands are not contiguous row-major matrices of one shape}}
  linalg.matmul ins(%x, %wg : memref<?x64xbf16>, memref<64x1024xbf16, strided<[2048, 1]>>) outs(%g : memref<?x1024xbf16>)
  %u = memref.alloc(%m) : memref<?x1024xbf16>
  linalg.fill ins(%zero : bf16) outs(%u : memref<?x1024xbf16>)
  // expected-remark@+1 {{keeps cuBLAS: operands whose rows are not contiguous}}
  linalg.matmul ins(%x, %wu : memref<?x64xbf16>, memref<64x1024xbf16, strided<[2048, 1], offset: 1024>>) outs(%u : memref<?x1024xbf16>)
  linalg.generic {indexing_maps = [#mh_id, #mh_id, #mh_id], iterator_types = ["parallel", "parallel"]}
      ins(%g, %u : memref<?x1024xbf16>, memref<?x1024xbf16>) outs(%act : memref<?x1024xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %p = arith.mulf %a, %b : bf16
    linalg.yield %p : bf16
  }
  memref.dealloc %g : memref<?x1024xbf16>
  memref.dealloc %u : memref<?x1024xbf16>
  return
}
// -----

// A non-gated MLP's first half (GPT-style): RMSNorm, one up projection,
// GELU. The lone matmul takes the norm as its prologue and the activation
// as its epilogue, as a pair does: one generated kernel per row count,
// the ops as they were in the library's branch.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK: gpu.module @symm_matmul_kernels
// CHECK-DAG: func.func private @symm_matmul_0_epilogue(%[[U:.*]]: bf16, %{{.*}}: bf16) -> bf16
// CHECK-DAG: func.func private @symm_matmul_0_step(%{{.*}}: bf16, %{{.*}}: f32) -> f32
// CHECK-DAG: func.func private @symm_matmul_0_prologue(%{{.*}}: bf16, %{{.*}}: f32, %{{.*}}: bf16, %{{.*}}: bf16) -> bf16
// CHECK-DAG: gpu.func @symm_matmul_0_gemv1(
// CHECK-DAG: gpu.func @symm_matmul_0_mma16(
// CHECK-LABEL: func.func @gelu_up
// CHECK-SAME: (%[[X:.*]]: memref<?x4096xbf16>, %[[NORM:.*]]: memref<4096xbf16>, %[[W:.*]]: memref<4096x11008xbf16>, %[[ACT:.*]]: memref<?x11008xbf16>)
// CHECK: symm_mem.kernel_rounds site({{[0-9]+}}) rows(%{{.*}}) max_rows(16){{$}}
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1
// CHECK-SAME: args(%{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : !llvm.ptr, %{{.*}} : i64
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_mma16
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0 blocks
// CHECK: } else {
// CHECK: linalg.fill
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.fill
// CHECK: linalg.matmul ins(%{{.*}}, %[[W]]
// CHECK: linalg.generic
// CHECK-SAME: outs(%[[ACT]]
func.func @gelu_up(%x: memref<?x4096xbf16>, %norm: memref<4096xbf16>, %w: memref<4096x11008xbf16>,
                   %act: memref<?x11008xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %hidden = arith.constant 4096.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %sq = memref.alloc(%m) : memref<?xf32>
  // expected-remark@+1 {{matmul 4096x11008 with the row-norm prologue (its row factor applied to the sums) with the element-wise epilogue: generated kernel @symm_matmul_0}}
  linalg.fill ins(%zero : f32) outs(%sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %s = arith.mulf %f, %f : f32
    %t = arith.addf %s, %acc : f32
    linalg.yield %t : f32
  }
  %xn = memref.alloc(%m) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sq, %norm : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
      outs(%xn : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %s: f32, %wt: bf16, %unused: bf16):
    %mean = arith.divf %s, %hidden : f32
    %var = arith.addf %mean, %eps : f32
    %inv = math.rsqrt %var : f32
    %f = arith.extf %v : bf16 to f32
    %y = arith.mulf %f, %inv : f32
    %wf = arith.extf %wt : bf16 to f32
    %z = arith.mulf %y, %wf : f32
    %r = arith.truncf %z : f32 to bf16
    linalg.yield %r : bf16
  }
  %up = memref.alloc(%m) : memref<?x11008xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x11008xbf16>)
  linalg.matmul ins(%xn, %w : memref<?x4096xbf16>, memref<4096x11008xbf16>)
                outs(%up : memref<?x11008xbf16>)
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%up : memref<?x11008xbf16>) outs(%act : memref<?x11008xbf16>) {
  ^bb0(%u: bf16, %unused: bf16):
    %uf = arith.extf %u : bf16 to f32
    %t = math.tanh %uf : f32
    %y = arith.mulf %uf, %t : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %sq : memref<?xf32>
  memref.dealloc %xn : memref<?x4096xbf16>
  memref.dealloc %up : memref<?x11008xbf16>
  return
}

// -----

// An attention block's QKV projection after its input RMSNorm: a lone
// matmul with a prologue and no epilogue.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// CHECK: gpu.module @symm_matmul_kernels
// CHECK-NOT: @symm_matmul_0_epilogue
// CHECK: func.func private @symm_matmul_0_step
// CHECK-LABEL: func.func @qkv
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1
// CHECK: } else {
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.matmul
func.func @qkv(%x: memref<?x4096xbf16>, %norm: memref<4096xbf16>, %w: memref<4096x3072xbf16>,
               %qkv: memref<?x3072xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %hidden = arith.constant 4096.0 : f32
  %sq = memref.alloc(%m) : memref<?xf32>
  // expected-remark@+1 {{matmul 4096x3072 with the row-norm prologue (its row factor applied to the sums): generated kernel @symm_matmul_0}}
  linalg.fill ins(%zero : f32) outs(%sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %s = arith.mulf %f, %f : f32
    %t = arith.addf %s, %acc : f32
    linalg.yield %t : f32
  }
  %xn = memref.alloc(%m) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sq, %norm : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
      outs(%xn : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %s: f32, %wt: bf16, %unused: bf16):
    %mean = arith.divf %s, %hidden : f32
    %inv = math.rsqrt %mean : f32
    %f = arith.extf %v : bf16 to f32
    %y = arith.mulf %f, %inv : f32
    %wf = arith.extf %wt : bf16 to f32
    %z = arith.mulf %y, %wf : f32
    %r = arith.truncf %z : f32 to bf16
    linalg.yield %r : bf16
  }
  linalg.fill ins(%zero_bf16 : bf16) outs(%qkv : memref<?x3072xbf16>)
  linalg.matmul ins(%xn, %w : memref<?x4096xbf16>, memref<4096x3072xbf16>)
                outs(%qkv : memref<?x3072xbf16>)
  memref.dealloc %sq : memref<?xf32>
  memref.dealloc %xn : memref<?x4096xbf16>
  return
}

// -----

// Planned buffers are views of one pool: the pair's input and the down
// projection's output here. Only a view of a group's output counts as
// reading it: the pair is not marked after the down projection's GEMV;
// the down projection, which reads the pair's output, is.
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @pool_views
// CHECK: symm_mem.kernel_rounds site([[PAIR:[0-9]+]]) rows(%{{.*}}) max_rows(16){{$}}
// CHECK: symm_mem.kernel_rounds site({{[0-9]+}}) rows(%{{.*}}) max_rows(16) after_gemv([[PAIR]]){{$}}
func.func @pool_views(%m: index, %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
                      %wd: memref<7168x4096xbf16>) {
  %one = arith.constant 1.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %c0 = arith.constant 0 : index
  %c16m = arith.constant 16777216 : index
  %pool = memref.alloc() : memref<33554432xi8>
  %xn = memref.view %pool[%c0][%m] : memref<33554432xi8> to memref<?x4096xbf16>
  %out = memref.view %pool[%c16m][%m] : memref<33554432xi8> to memref<?x4096xbf16>
  %gate = memref.alloc(%m) : memref<?x7168xbf16>
  // expected-remark@+1 {{matmul pair (4096x7168 per weight) with the element-wise epilogue}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%gate : memref<?x7168xbf16>)
  %up = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%up : memref<?x7168xbf16>)
  %act = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x7168xbf16>, memref<?x7168xbf16>)
      outs(%act : memref<?x7168xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %unused: bf16):
    %gf = arith.extf %g : bf16 to f32
    %uf = arith.extf %u : bf16 to f32
    %y = arith.mulf %gf, %uf : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  // expected-remark@+1 {{matmul 7168x4096}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%out : memref<?x4096xbf16>)
  linalg.matmul ins(%act, %wd : memref<?x7168xbf16>, memref<7168x4096xbf16>)
                outs(%out : memref<?x4096xbf16>)
  return
}
