// The after-GEMV wgmma GEMV (`wgmma-gemv-after-gemv`, which symm-compile
// turns on for --chip sm_90a): a single matmul without a prologue that
// reads the output of a GEMV launched just before it (the MLP's down
// projection after the gate/up pair) takes a 16-row wgmma GEMV with an
// 8-stage ring for calls of 2 to 16 rows, before the tensor-core GEMVs
// (which still take them where the runtime has no descriptor), where its
// grid is full (a short grid is the short-grid rule's) and wastes no wave;
// a remark says why; calls of up to 8 rows take the same ring's 8-row
// kernel (m64n8k16, `wgmma-gemv-eight-rows`). Its producer fills the ring's stages with
// weight before the kernel waits for the grid before it (the kernel places
// that wait itself), and `a`'s boxes, which that grid writes, only after.
// Where another effect sits between the two, or where the GEMV's output is
// a caller's buffer (which may be the weight too), the matmul keeps the
// register GEMV.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv-after-gemv=true launch-dependents=true})' | FileCheck %s
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' 2>/dev/null | FileCheck %s --check-prefix=OFF
// OFF-LABEL: func.func @slices
// OFF-NOT: _wgmma
// OFF: return

// The 8-row kernel fills its ring the same way before the same wait, and
// multiplies with m64n8k16.
// CHECK-LABEL: gpu.func @symm_matmul_1_wgmma8(
// CHECK-SAME: %[[DESC8:[^:]*]]: i64, %{{[^:]*}}: i64) kernel
// CHECK: %[[W8:.*]] = llvm.inttoptr %[[DESC8]]
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %c18432_i32
// CHECK-COUNT-8: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[W8]], %{{.*}}, box[
// CHECK: nvvm.griddepcontrol  wait
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 8, k = 16>
// CHECK: gpu.return

// The kernel: the weight's descriptor and that of the call's rows of `a`
// last. After the barriers' set-up, the producer's first lane expects each
// of the 8 stages' 20 KB and copies the stage's weight box (the weight's
// descriptor only); then every thread waits for the grid before, once;
// the loop refills the weight of stages 8 and on and copies every stage's
// box of `a` (its descriptor).
// CHECK-LABEL: gpu.func @symm_matmul_1_wgmma16(
// CHECK-SAME: %[[DESC:[^:]*]]: i64, %[[ADESC:[^:]*]]: i64) kernel
// CHECK: %[[W:.*]] = llvm.inttoptr %[[DESC]]
// CHECK: %[[A:.*]] = llvm.inttoptr %[[ADESC]]
// CHECK: gpu.barrier
// CHECK-NOT: griddepcontrol
// CHECK-COUNT-8: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[W]], %{{.*}}, box[
// CHECK-NOT: %[[A]], %
// CHECK: nvvm.griddepcontrol  wait
// CHECK-NOT: griddepcontrol
// CHECK: scf.for
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[W]], %{{.*}}, box[
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %[[A]], %{{.*}}, box[
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 16, k = 16>
// CHECK: nvvm.griddepcontrol  launch_dependents
// CHECK-NOT: griddepcontrol
// CHECK: gpu.return
// The host launches them in the branch, 64 bands of 2 slices, each with
// its ring's shared memory: the 8-row kernel's 8 stages of 18 KB for calls
// of up to 8 rows, then the 16-row one's 8 stages of 20 KB.
// CHECK-LABEL: func.func @slices
// CHECK: scf.if
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_1_wgmma8 blocks in (%c64, %c2{{.*}}, %{{.*}}) threads in (%c160, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c148640_i32
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_1_wgmma16 blocks in (%c64, %c2{{.*}}, %{{.*}}) threads in (%c160, %{{.*}}, %{{.*}}) dynamic_shared_memory_size %c165056_i32
// The split-K slices of the down projection, in the branch that takes
// calls of up to 128 rows (as symm-mem-split-k writes it): the op before
// the branch is the pair's epilogue, so the slices take the ring too.
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
    // expected-remark@+1 {{matmul in 2 split-K slices of 3584x4096: generated kernel}}
    linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
        outs(%p : memref<2x?x4096xf32>)
  }
  return
}

// -----

// The whole down projection in one slice runs 64 bands: a short grid, which
// is the short-grid rule's (`wgmma-gemv-short`, off here), whose ring does
// not fill early (on TP 8's down projection that measured 0.1-0.6 µs
// slower).
// CHECK-LABEL: func.func @short_grid
// CHECK-NOT: _wgmma
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @short_grid(%xn: memref<?x4096xbf16>, %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
               %wd: memref<7168x4096xbf16>, %out: memref<?x4096xbf16>) {
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
  // expected-remark@+1 {{matmul 7168x4096: generated kernel @symm_matmul_1 (64x1 blocks of 512 threads, 111040 bytes of shared memory, 3 stages of 256 rows) (up to 1 row(s): the GEMV @symm_matmul_1_gemv1, 64x1 blocks of 512 threads) (up to 16 row(s): the GEMV @symm_matmul_1_mma16, 64x1 blocks of 512 threads), chosen}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%out : memref<?x4096xbf16>)
  linalg.matmul ins(%act, %wd : memref<?x7168xbf16>, memref<7168x4096xbf16>)
                outs(%out : memref<?x4096xbf16>)
  memref.dealloc %gate : memref<?x7168xbf16>
  memref.dealloc %up : memref<?x7168xbf16>
  memref.dealloc %act : memref<?x7168xbf16>
  return
}

// -----

// Another effect between the pair and the split-K slices (a fill of
// another buffer): the grid before them is not the pair's GEMV.
// CHECK-LABEL: func.func @between
// CHECK-NOT: _wgmma
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @between(%xn: memref<?x4096xbf16>, %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
    %wd: memref<7168x4096xbf16>, %p: memref<2x?x4096xf32>,
    %other: memref<16xbf16>) {
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
  linalg.fill ins(%zero_bf16 : bf16) outs(%other : memref<16xbf16>)
  // expected-remark@+5 {{matmul in 2 split-K slices of 3584x4096: generated kernel}}
  %as = memref.reinterpret_cast %act to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
      : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
  %ws = memref.reinterpret_cast %wd to offset: [0], sizes: [2, 3584, 4096], strides: [14680064, 4096, 1]
      : memref<7168x4096xbf16> to memref<2x3584x4096xbf16>
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
      outs(%p : memref<2x?x4096xf32>)
  return
}

// -----

// Slices whose 64-column bands make 160 blocks (a 5120-wide output in 2
// slices): on 132 SMs that wastes most of a second wave, where the
// register GEMV widens its bands to one wave. They keep it, and say why.
// CHECK-LABEL: func.func @wasted_wave
// CHECK-NOT: _wgmma
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @wasted_wave(%xn: memref<?x5120xbf16>, %wg: memref<5120x6912xbf16>, %wu: memref<5120x6912xbf16>,
    %wd: memref<6912x5120xbf16>, %p: memref<2x?x5120xf32>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %xn, %c0 : memref<?x5120xbf16>
  %one = arith.constant 1.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %gate = memref.alloc(%m) : memref<?x6912xbf16>
  // expected-remark@+1 {{matmul pair (5120x6912 per weight)}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x6912xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x5120xbf16>, memref<5120x6912xbf16>)
                outs(%gate : memref<?x6912xbf16>)
  %up = memref.alloc(%m) : memref<?x6912xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x6912xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x5120xbf16>, memref<5120x6912xbf16>)
                outs(%up : memref<?x6912xbf16>)
  %act = memref.alloc(%m) : memref<?x6912xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x6912xbf16>, memref<?x6912xbf16>)
      outs(%act : memref<?x6912xbf16>) {
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
  // expected-remark@+6 {{keeps the register-streaming GEMV for up to 16 rows behind the GEMV before it: the wgmma GEMV's 160 blocks would leave part of a wave on 132 SMs idle}}
  // expected-remark@+5 {{matmul in 2 split-K slices of 3456x5120: generated kernel}}
  %as = memref.reinterpret_cast %act to offset: [0], sizes: [2, %m, 3456], strides: [3456, 6912, 1]
      : memref<?x6912xbf16> to memref<2x?x3456xbf16, strided<[3456, 6912, 1]>>
  %ws = memref.reinterpret_cast %wd to offset: [0], sizes: [2, 3456, 5120], strides: [17694720, 5120, 1]
      : memref<6912x5120xbf16> to memref<2x3456x5120xbf16>
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3456xbf16, strided<[3456, 6912, 1]>>, memref<2x3456x5120xbf16>)
      outs(%p : memref<2x?x5120xf32>)
  return
}

// -----

// The pair writes a caller's buffer, which the caller may also have passed
// as the weight: the weight might be the pair's output, so the slices keep
// the register GEMV.
// CHECK-LABEL: func.func @caller_buffer
// CHECK-NOT: _wgmma
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @caller_buffer(%xn: memref<?x4096xbf16>, %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
    %wd: memref<7168x4096xbf16>, %p: memref<2x?x4096xf32>,
    %act: memref<?x7168xbf16>) {
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
  // expected-remark@+5 {{matmul in 2 split-K slices of 3584x4096: generated kernel}}
  %as = memref.reinterpret_cast %act to offset: [0], sizes: [2, %m, 3584], strides: [3584, 7168, 1]
      : memref<?x7168xbf16> to memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>
  %ws = memref.reinterpret_cast %wd to offset: [0], sizes: [2, 3584, 4096], strides: [14680064, 4096, 1]
      : memref<7168x4096xbf16> to memref<2x3584x4096xbf16>
  linalg.batch_matmul {symm.overwrites} ins(%as, %ws : memref<2x?x3584xbf16, strided<[3584, 7168, 1]>>, memref<2x3584x4096xbf16>)
      outs(%p : memref<2x?x4096xf32>)
  return
}
