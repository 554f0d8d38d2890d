// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)' | FileCheck %s
// RUN: symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{launch-dependents=false})' 2>&1 | FileCheck %s --check-prefix=SM80

// A pair right behind a rows kernel that lets the next grid launch as it
// starts for calls of one row (symm-mem-expand-collectives'
// launch-dependents-rows marks its launches `symm.launches_dependents = 1`;
// the decoder's gate/up pair after the o_proj all-reduce with the residual
// and the norm): the pair's one-row GEMV is resident while the all-reduce
// waits on its peers, so it sends its first weight lines towards L2 before
// its own wait (one line a thread). The GEMVs for more rows are not
// launched early and prefetch nothing. Without launch-dependents (before
// sm_90) nothing prefetches.
// SM80-NOT: remark: the GEMV for up to 1 row(s) prefetches
// SM80-NOT: nvvm.prefetch
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: gpu.func @symm_matmul_0_gemv1(
// CHECK: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK-LABEL: gpu.func @symm_matmul_0_mma16
// CHECK-NOT: nvvm.prefetch
// CHECK-LABEL: func.func @behind_all_reduce
// CHECK: gpu.launch_func @symm_kernels::@all_reduce_rows {{.*}} {symm.launches_dependents = 1 : i64}
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1
module attributes {gpu.container_module} {
  gpu.module @symm_kernels {
    gpu.func @all_reduce_rows(%rows: !llvm.ptr) kernel {
      gpu.return
    }
  }
  func.func @behind_all_reduce(%x: memref<?x4096xbf16>, %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
                               %act: memref<?x7168xbf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c512 = arith.constant 512 : index
    %m = memref.dim %x, %c0 : memref<?x4096xbf16>
    %one = arith.constant 1.0 : f32
    %zero_bf16 = arith.constant 0.0 : bf16
    %p = memref.extract_aligned_pointer_as_index %x : memref<?x4096xbf16> -> index
    %i = arith.index_cast %p : index to i64
    %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
    gpu.launch_func @symm_kernels::@all_reduce_rows blocks in (%c1, %c1, %c1) threads in (%c512, %c1, %c1)
        args(%ptr : !llvm.ptr) {symm.launches_dependents = 1 : i64}
    %gate = memref.alloc(%m) : memref<?x7168xbf16>
    // expected-remark@+2 {{the GEMV for up to 1 row(s) prefetches its weights' first lines into L2 while the all-reduce before it runs (which lets it launch as it starts)}}
    // expected-remark@+1 {{matmul pair (4096x7168 per weight) with the element-wise epilogue}}
    linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
    linalg.matmul ins(%x, %wg : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                  outs(%gate : memref<?x7168xbf16>)
    %up = memref.alloc(%m) : memref<?x7168xbf16>
    linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
    linalg.matmul ins(%x, %wu : memref<?x4096xbf16>, memref<4096x7168xbf16>)
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
    memref.dealloc %gate : memref<?x7168xbf16>
    memref.dealloc %up : memref<?x7168xbf16>
    return
  }
}

// -----

// Behind a launch that does not say so (a kernel that lets nothing launch
// early), the pair prefetches nothing: its prefetches would only delay its
// own loads (bench/results/2026-11-26-session7-h200.md).
#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: gpu.func @symm_matmul_0_gemv1(
// CHECK-NOT: nvvm.prefetch
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK-LABEL: func.func @behind_other_kernel
module attributes {gpu.container_module} {
  gpu.module @other_kernels {
    gpu.func @other(%rows: !llvm.ptr) kernel {
      gpu.return
    }
  }
  func.func @behind_other_kernel(%x: memref<?x4096xbf16>, %wg: memref<4096x7168xbf16>, %wu: memref<4096x7168xbf16>,
                                 %act: memref<?x7168xbf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c512 = arith.constant 512 : index
    %m = memref.dim %x, %c0 : memref<?x4096xbf16>
    %one = arith.constant 1.0 : f32
    %zero_bf16 = arith.constant 0.0 : bf16
    %p = memref.extract_aligned_pointer_as_index %x : memref<?x4096xbf16> -> index
    %i = arith.index_cast %p : index to i64
    %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
    gpu.launch_func @other_kernels::@other blocks in (%c1, %c1, %c1) threads in (%c512, %c1, %c1)
        args(%ptr : !llvm.ptr)
    %gate = memref.alloc(%m) : memref<?x7168xbf16>
    // expected-remark@+1 {{matmul pair (4096x7168 per weight) with the element-wise epilogue}}
    linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
    linalg.matmul ins(%x, %wg : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                  outs(%gate : memref<?x7168xbf16>)
    %up = memref.alloc(%m) : memref<?x7168xbf16>
    linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
    linalg.matmul ins(%x, %wu : memref<?x4096xbf16>, memref<4096x7168xbf16>)
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
    memref.dealloc %gate : memref<?x7168xbf16>
    memref.dealloc %up : memref<?x7168xbf16>
    return
  }
}

// -----

// The same pair with its weights stored n x k (nn.Linear's layout): its
// one-row GEMV (gemv_linear) prefetches the lines of its first 4 steps
// before its wait (a line a thread each); its tensor-core GEMV does not.
#id = affine_map<(d0, d1) -> (d0, d1)>
#lhs = affine_map<(m, n, k) -> (m, k)>
#weight_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: gpu.func @symm_matmul_0_gemv1(
// CHECK-COUNT-4: nvvm.prefetch level = L2, %{{.*}} : !llvm.ptr<1>
// CHECK-NOT: nvvm.prefetch
// CHECK: nvvm.griddepcontrol launch_dependents
// CHECK-LABEL: gpu.func @symm_matmul_0_mma16
// CHECK-NOT: nvvm.prefetch
// CHECK-LABEL: func.func @linear_behind_all_reduce
// CHECK: gpu.launch_func @symm_kernels::@all_reduce_rows {{.*}} {symm.launches_dependents = 1 : i64}
// CHECK: gpu.launch_func @symm_matmul_kernels::@symm_matmul_0_gemv1
module attributes {gpu.container_module} {
  gpu.module @symm_kernels {
    gpu.func @all_reduce_rows(%rows: !llvm.ptr) kernel {
      gpu.return
    }
  }
  func.func @linear_behind_all_reduce(%x: memref<?x4096xbf16>, %wg: memref<7168x4096xbf16>,
                                      %wu: memref<7168x4096xbf16>, %act: memref<?x7168xbf16>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c512 = arith.constant 512 : index
    %m = memref.dim %x, %c0 : memref<?x4096xbf16>
    %one = arith.constant 1.0 : f32
    %zero_bf16 = arith.constant 0.0 : bf16
    %p = memref.extract_aligned_pointer_as_index %x : memref<?x4096xbf16> -> index
    %i = arith.index_cast %p : index to i64
    %ptr = llvm.inttoptr %i : i64 to !llvm.ptr
    gpu.launch_func @symm_kernels::@all_reduce_rows blocks in (%c1, %c1, %c1) threads in (%c512, %c1, %c1)
        args(%ptr : !llvm.ptr) {symm.launches_dependents = 1 : i64}
    %gate = memref.alloc(%m) : memref<?x7168xbf16>
    // expected-remark@+2 {{the GEMV for up to 1 row(s) prefetches its weights' first lines into L2 while the all-reduce before it runs (which lets it launch as it starts)}}
    // expected-remark@+1 {{matmul pair (4096x7168 per weight) with the element-wise epilogue, the weights stored n x k}}
    linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
    linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                  ins(%x, %wg : memref<?x4096xbf16>, memref<7168x4096xbf16>)
                  outs(%gate : memref<?x7168xbf16>)
    %up = memref.alloc(%m) : memref<?x7168xbf16>
    linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
    linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                  ins(%x, %wu : memref<?x4096xbf16>, memref<7168x4096xbf16>)
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
    memref.dealloc %gate : memref<?x7168xbf16>
    memref.dealloc %up : memref<?x7168xbf16>
    return
  }
}
