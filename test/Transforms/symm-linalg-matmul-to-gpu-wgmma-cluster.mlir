// The wgmma GEMVs in thread-block clusters (`wgmma-gemv-cluster`;
// symm-compile --matmul-wgmma-gemv-cluster): the blocks of a cluster, side
// by side along the grid's column bands of one slice, share the call's
// rows of `a`. Each block's producer copies its share of a stage's pieces
// of `a` (piece p is block p mod N's) by TMA multicast into every block of
// the cluster, each completing the bytes on its own `full` barrier; each
// stage's `empty` barrier counts the consumers of every block, which
// release it in all of them (`mapa`, then `mbarrier.arrive` on the
// cluster's window, at the default `.cta` scope), so that no producer
// refills a stage another block still reads. The blocks meet as a cluster
// once their barriers are set up and once more before they leave (no block
// leaves while another may still arrive on its barriers). A grid whose
// bands do not split into clusters takes its ring without, and the remark
// says so.
// With wgmma-gemv-cluster=2, every ring in clusters of 2:
// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv-short=true wgmma-gemv-after-gemv=true launch-dependents=true wgmma-gemv-cluster=2})' | FileCheck %s
// By default (0) each ring its own: the after-GEMV ring in clusters of 2,
// the short grid's in none.
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv-short=true wgmma-gemv-after-gemv=true launch-dependents=true})' 2>/dev/null | FileCheck %s --check-prefix=DEF
// DEF-LABEL: gpu.func @symm_matmul_1_wgmma8(
// DEF-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// DEF: multicast_mask
// DEF-LABEL: gpu.func @symm_matmul_1_wgmma16(
// DEF-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// DEF-LABEL: func.func @slices
// With wgmma-gemv-cluster=1, no cluster anywhere.
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv-short=true wgmma-gemv-after-gemv=true launch-dependents=true wgmma-gemv-cluster=1})' 2>/dev/null | FileCheck %s --check-prefix=OFF
// OFF-LABEL: gpu.module @symm_matmul_kernels
// OFF-NOT: {{nvvm.cluster|mapa|multicast}}

// The down projection's 8-row kernel behind the pair (its 16-row kernel
// is built the same way): clusters of 2; 8 `empty` arrivals a stage (4
// consumer warps in each block), 1 `full` one.
// CHECK-LABEL: gpu.func @symm_matmul_1_wgmma8(
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: nvvm.mbarrier.init %{{.*}}, %c1_i32
// CHECK: nvvm.mbarrier.init %{{.*}}, %c8_i32
// CHECK: nvvm.fence.mbarrier.init
// CHECK: gpu.barrier
// CHECK-NEXT: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: %[[RANK32:.*]] = nvvm.read.ptx.sreg.cluster.ctarank : i32
// CHECK-NEXT: %[[RANK:.*]] = arith.extui %[[RANK32]] : i32 to i64
// The weight's boxes stay the block's own; `a`'s first piece is block 0's
// and its second block 1's, each multicast to both (mask 0b11).
// CHECK: nvvm.griddepcontrol  wait
// CHECK: scf.for
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{[^,]*}}, %{{[^,]*}}, %{{[^,]*}}, box[%{{[^]]*}}] l2_cache_hint
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[RANK]], %c0_i64
// CHECK-NEXT: scf.if %[[FIRST]] {
// CHECK-NEXT: %[[MASK:.*]] = arith.constant 3 : i16
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask = %[[MASK]]
// CHECK: %[[SECOND:.*]] = arith.cmpi eq, %[[RANK]], %c1_i64
// CHECK-NEXT: scf.if %[[SECOND]] {
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask =
// The consumers release the stage before in both blocks.
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 8, k = 16>
// CHECK: nvvm.wgmma.wait.group.sync.aligned 1
// CHECK: %[[HERE:.*]] = nvvm.mapa %[[EMPTY:.*]], %c0_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[HERE]] : !llvm.ptr<7>
// CHECK: %[[THERE:.*]] = nvvm.mapa %[[EMPTY]], %c1_i32{{.*}} : !llvm.ptr<3> -> !llvm.ptr<7>
// CHECK-NEXT: nvvm.mbarrier.arrive %[[THERE]] : !llvm.ptr<7>
// The blocks meet once more before they leave.
// CHECK: nvvm.cluster.arrive {aligned}
// CHECK-NEXT: nvvm.cluster.wait {aligned}
// CHECK-NEXT: gpu.return
// CHECK-LABEL: gpu.func @symm_matmul_1_wgmma16(
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK: multicast_mask
// CHECK-LABEL: func.func @slices
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @slices(%xn: memref<?x4096xbf16>, %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
    %wd: memref<7168x4096xbf16>, %p: memref<2x?x4096xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %xn, %c0 : memref<?x4096xbf16>
  %one = arith.constant 1.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %gate = memref.alloc(%m) : memref<?x7168xbf16>
  // expected-remark@+1 {{matmul pair (4096x7168 per weight)}}
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
  %c128 = arith.constant 128 : index
  %few = arith.cmpi ule, %m, %c128 : index
  scf.if %few {
    %as = memref.reinterpret_cast %act to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
        : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
    %ws = memref.reinterpret_cast %wd to offset: [0], sizes: [2, 3584, 4096], strides: [14680064, 4096, 1]
        : memref<7168x4096xbf16> to memref<2x3584x4096xbf16>
    // expected-remark@+2 {{calls of 2 to 16 rows take the wgmma GEMV's 8-stage ring (its 8-row kernel, m64n8k16, for calls of up to 8), which fills with weight while the GEMV before it drains}}
    // expected-remark@+1 {{(up to 8 row(s): the GEMV @symm_matmul_1_wgmma8, 64x2 blocks of 160 threads in clusters of 2 sharing `a`) (up to 16 row(s): the GEMV @symm_matmul_1_wgmma16, 64x2 blocks of 160 threads in clusters of 2 sharing `a`)}}
    linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
        outs(%p : memref<2x?x4096xf32>)
  }
  return
}

// -----

// The after-GEMV ring of a hidden size of 4160 (65 bands) runs without
// clusters, by default too.
// CHECK-LABEL: gpu.func @symm_matmul_1_wgmma8(
// CHECK-NOT: cluster_dim
// CHECK-SAME: nvvm.minctasm
// CHECK-LABEL: func.func @slices_odd
// DEF-LABEL: gpu.func @symm_matmul_1_wgmma8(
// DEF-NOT: cluster_dim
// DEF-SAME: nvvm.minctasm
// DEF-NOT: {{mapa|multicast}}
// DEF-LABEL: func.func @slices_odd
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @slices_odd(%xn: memref<?x4160xbf16>, %wg: memref<4160x7168xbf16>, %wu: memref<4160x7168xbf16>,
    %wd: memref<7168x4160xbf16>, %p: memref<2x?x4160xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %xn, %c0 : memref<?x4160xbf16>
  %one = arith.constant 1.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %gate = memref.alloc(%m) : memref<?x7168xbf16>
  // expected-remark@+1 {{matmul pair (4160x7168 per weight)}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x4160xbf16>, memref<4160x7168xbf16>)
                outs(%gate : memref<?x7168xbf16>)
  %up = memref.alloc(%m) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x4160xbf16>, memref<4160x7168xbf16>)
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
  %c128 = arith.constant 128 : index
  %few = arith.cmpi ule, %m, %c128 : index
  scf.if %few {
    %as = memref.reinterpret_cast %act to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
        : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
    %ws = memref.reinterpret_cast %wd to offset: [0], sizes: [2, 3584, 4160], strides: [14909440, 4160, 1]
        : memref<7168x4160xbf16> to memref<2x3584x4160xbf16>
    // expected-remark@+2 {{calls of 2 to 16 rows take the wgmma GEMV's 8-stage ring (its 8-row kernel, m64n8k16, for calls of up to 8) without clusters (its 65 column bands do not split into clusters of 2), which fills with weight while the GEMV before it drains}}
    // expected-remark@+1 {{(up to 8 row(s): the GEMV @symm_matmul_1_wgmma8, 65x2 blocks of 160 threads) (up to 16 row(s): the GEMV @symm_matmul_1_wgmma16, 65x2 blocks of 160 threads)}}
    linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4160xbf16>)
        outs(%p : memref<2x?x4160xf32>)
  }
  return
}

// -----

// The short grid's ring (TP 2's o_proj, 64 bands) shares `a` the same way.
// CHECK-LABEL: gpu.func @symm_matmul_0_wgmma8(
// CHECK-SAME: nvvm.cluster_dim = array<i32: 2, 1, 1>
// CHECK-LABEL: func.func @o_proj
// By default the short grid's ring runs without clusters.
// DEF-LABEL: gpu.func @symm_matmul_0_wgmma8(
// DEF-NOT: cluster_dim
// DEF-SAME: nvvm.minctasm
// DEF-NOT: {{mapa|multicast}}
// DEF-LABEL: func.func @o_proj
func.func @o_proj(%x: memref<?x2048xbf16>, %w: memref<2048x4096xbf16>, %out: memref<?x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  // expected-remark@+2 {{calls of 2 to 16 rows take the wgmma GEMV's 8-stage ring (its 8-row kernel, m64n8k16, for calls of up to 8): the register-streaming GEMV's grid is short (64 blocks, under 128)}}
  // expected-remark@+1 {{(up to 8 row(s): the GEMV @symm_matmul_0_wgmma8, 64x1 blocks of 160 threads in clusters of 2 sharing `a`)}}
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x4096xbf16>)
  linalg.matmul ins(%x, %w : memref<?x2048xbf16>, memref<2048x4096xbf16>) outs(%out : memref<?x4096xbf16>)
  return
}

// -----

// 63 bands (N = 4032) do not split into clusters of 2: the ring runs
// without, and the remark says so.
// CHECK-LABEL: gpu.func @symm_matmul_0_wgmma8(
// CHECK-NOT: cluster_dim
// CHECK-SAME: nvvm.minctasm
// CHECK-NOT: {{mapa|multicast}}
// CHECK-LABEL: func.func @odd_bands
func.func @odd_bands(%x: memref<?x2048xbf16>, %w: memref<2048x4032xbf16>, %out: memref<?x4032xbf16>) {
  %zero = arith.constant 0.0 : bf16
  // expected-remark@+2 {{calls of 2 to 16 rows take the wgmma GEMV's 8-stage ring (its 8-row kernel, m64n8k16, for calls of up to 8) without clusters (its 63 column bands do not split into clusters of 2): the register-streaming GEMV's grid is short (63 blocks, under 128)}}
  // expected-remark@+1 {{(up to 8 row(s): the GEMV @symm_matmul_0_wgmma8, 63x1 blocks of 160 threads) (up to 16 row(s): the GEMV @symm_matmul_0_wgmma16, 63x1 blocks of 160 threads)}}
  linalg.fill ins(%zero : bf16) outs(%out : memref<?x4032xbf16>)
  linalg.matmul ins(%x, %w : memref<?x2048xbf16>, memref<2048x4032xbf16>) outs(%out : memref<?x4032xbf16>)
  return
}
