// symm-linalg-matmul-to-gpu{mma-gemv-stage-cluster=N}: the tensor-core
// pair GEMV whose RMSNorm prologue stages the call's rows of `a` runs in
// clusters of N blocks that share one copy of the rows. Block r of a
// cluster bulk-copies rows r, r + N, ... multicast to every block; each
// block's mbarrier (after everything else in its shared memory) is armed
// with all the rows' bytes before the cluster meets, and the statistic's
// pass then reads the rows from shared memory where it read them from
// global memory. The cluster is the largest power of two up to N that
// divides the grid: 112 and 16 blocks take 4, 27 blocks none.
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-stage-cluster=4})' 2>/dev/null | FileCheck %s
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-stage-cluster=4})' 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// Off by default: no cluster anywhere.
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' 2>&1 | FileCheck %s --check-prefix=OFF
// OFF-NOT: {{nvvm.cluster|clusters of|multicast}}

// REMARK: remark: matmul pair (4096x7168 per weight){{.*}}(up to 16 row(s): the GEMV @symm_matmul_0_mma16, 112x1 blocks of 512 threads in clusters of 4 sharing the staged rows)
// REMARK: remark: matmul pair (4096x1728 per weight){{.*}}(up to 16 row(s): the GEMV @symm_matmul_0_mma16, 27x1 blocks of 512 threads)
// REMARK: remark: matmul pair (4096x1000 per weight){{.*}}(up to 16 row(s): the GEMV @symm_matmul_0_mma16, 16x1 blocks of 512 threads in clusters of 4 sharing the staged rows)

// CHECK-LABEL: gpu.func @symm_matmul_0_mma16(
// CHECK-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// The barrier after the 16 staged rows (16 x 8224 bytes) and their
// statistics (16 x 4).
// CHECK: %[[BAR:.*]] = llvm.getelementptr %{{.*}}[%c131648_i64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: %[[ROWS:.*]] = arith.minui %{{.*}}, %c16_i64{{.*}} : i64
// CHECK: scf.if
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1 : i32
// CHECK-NEXT: nvvm.mbarrier.init %[[BAR]], %[[ONE]]
// CHECK-NEXT: nvvm.fence.mbarrier.init
// CHECK-NEXT: %[[BYTES:.*]] = arith.muli %[[ROWS]], %c8192_i64
// CHECK-NEXT: %[[BYTES32:.*]] = arith.trunci %[[BYTES]] : i64 to i32
// CHECK-NEXT: nvvm.mbarrier.arrive.expect_tx %[[BAR]], %[[BYTES32]]
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK: %[[RANK:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK: %[[MASK:.*]] = arith.constant 15 : i16
// CHECK: scf.for %[[ROW:.*]] = %{{.*}} to %[[ROWS]] step %c4_i64
// CHECK: %[[DST:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr<3> to !llvm.ptr<7>
// CHECK-NEXT: %[[SRC:.*]] = llvm.addrspacecast %{{.*}} : !llvm.ptr to !llvm.ptr<1>
// CHECK-NEXT: nvvm.cp.async.bulk.shared.cluster.global %[[DST]], %[[SRC]], %[[BAR]], %c8192_i32 multicast_mask = %[[MASK]] : !llvm.ptr<7>, <1>
// CHECK: nvvm.mbarrier.try_wait.parity %[[BAR]], %c0_i32
// The statistic's pass reads each row's pieces from shared memory.
// CHECK: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<3> -> vector<8xbf16>
// CHECK: func.call @symm_matmul_0_step
// The one-row GEMV stages no rows of bf16: no cluster.
// CHECK-LABEL: gpu.func @symm_matmul_0_gemv1(
// CHECK-NOT: {{nvvm.cluster|multicast}}
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @symm_matmul_0_mma16(
// CHECK-NOT: {{nvvm.cluster|multicast}}
// CHECK: gpu.return

// CHECK-LABEL: gpu.func @symm_matmul_0_mma16(
// CHECK-SAME: nvvm.cluster_dim = array<i32: 4, 1, 1>
// CHECK: nvvm.cp.async.bulk.shared.cluster.global

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

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

func.func @gate_up_27_blocks(%x: memref<?x4096xbf16>, %norm: memref<4096xbf16>,
                   %wg: memref<4096x1728xbf16>, %wu: memref<4096x1728xbf16>,
                   %act: memref<?x1728xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 4096.0 : f32
  %sum_sq = memref.alloc(%m) : memref<?xf32>
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
  %gate = memref.alloc(%m) : memref<?x1728xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x1728xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x4096xbf16>, memref<4096x1728xbf16>)
                outs(%gate : memref<?x1728xbf16>)
  %up = memref.alloc(%m) : memref<?x1728xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x1728xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x4096xbf16>, memref<4096x1728xbf16>)
                outs(%up : memref<?x1728xbf16>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x1728xbf16>, memref<?x1728xbf16>)
      outs(%act : memref<?x1728xbf16>) {
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
  memref.dealloc %gate : memref<?x1728xbf16>
  memref.dealloc %up : memref<?x1728xbf16>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @gate_up_16_blocks(%x: memref<?x4096xbf16>, %norm: memref<4096xbf16>,
                   %wg: memref<4096x1000xbf16>, %wu: memref<4096x1000xbf16>,
                   %act: memref<?x1000xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 4096.0 : f32
  %sum_sq = memref.alloc(%m) : memref<?xf32>
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
  %gate = memref.alloc(%m) : memref<?x1000xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x1000xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x4096xbf16>, memref<4096x1000xbf16>)
                outs(%gate : memref<?x1000xbf16>)
  %up = memref.alloc(%m) : memref<?x1000xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x1000xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x4096xbf16>, memref<4096x1000xbf16>)
                outs(%up : memref<?x1000xbf16>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x1000xbf16>, memref<?x1000xbf16>)
      outs(%act : memref<?x1000xbf16>) {
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
  memref.dealloc %gate : memref<?x1000xbf16>
  memref.dealloc %up : memref<?x1000xbf16>
  return
}
