// What symm-linalg-matmul-to-gpu leaves to cuBLAS, and why, at the op; and
// the options it refuses.
// RUN: symm-opt %s -split-input-file -verify-diagnostics --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu)'
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{max-rows=24})' 2>&1 | FileCheck %s --check-prefix=ROWS
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{bk=48})' 2>&1 | FileCheck %s --check-prefix=BK
// ROWS: error: symm-linalg-matmul-to-gpu: max-rows = 24: the generated kernels take a multiple of 16 rows, at most 64
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv-columns=12})' 2>&1 | FileCheck %s --check-prefix=GEMV-COLUMNS
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv-k-groups=128})' 2>&1 | FileCheck %s --check-prefix=GEMV-THREADS
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv-unroll=-1})' 2>&1 | FileCheck %s --check-prefix=GEMV-UNROLL
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{gemv-max-rows=0})' 2>&1 | FileCheck %s --check-prefix=GEMV-ROWS
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-rows=12})' 2>&1 | FileCheck %s --check-prefix=MMA-ROWS
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-columns=48})' 2>&1 | FileCheck %s --check-prefix=MMA-COLUMNS
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-k-groups=64})' 2>&1 | FileCheck %s --check-prefix=MMA-THREADS
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-unroll=-2})' 2>&1 | FileCheck %s --check-prefix=MMA-UNROLL
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{mma-gemv-ahead=-1})' 2>&1 | FileCheck %s --check-prefix=MMA-AHEAD
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true wgmma-gemv-prefetch=-5})' 2>&1 | FileCheck %s --check-prefix=WGMMA-PREFETCH
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true wgmma-gemv-max-rows=200})' 2>&1 | FileCheck %s --check-prefix=WGMMA-ROWS
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true wgmma-gemv-max-rows=8})' 2>&1 | FileCheck %s --check-prefix=WGMMA-FEW
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true wgmma-gemv-stage-rows=48})' 2>&1 | FileCheck %s --check-prefix=WGMMA-STAGE
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true wgmma-gemv-stages=1})' 2>&1 | FileCheck %s --check-prefix=WGMMA-STAGES
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wave-sms=0})' 2>&1 | FileCheck %s --check-prefix=SMS
// SMS: error: symm-linalg-matmul-to-gpu: wave-sms = 0: the SMs of the GPU the kernels run on, 1 to 1024
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv-cluster=3})' 2>&1 | FileCheck %s --check-prefix=WGMMA-CLUSTER
// RUN: not symm-opt %s -split-input-file --pass-pipeline='builtin.module(symm-linalg-matmul-to-gpu{wgmma-gemv=true wgmma-gemv-stage-rows=64 wgmma-gemv-cluster=2})' 2>&1 | FileCheck %s --check-prefix=WGMMA-CLUSTER-PIECES
// WGMMA-CLUSTER: error: symm-linalg-matmul-to-gpu: wgmma-gemv-cluster = 3: blocks of a cluster that share `a`, 1, 2 or 4
// WGMMA-CLUSTER-PIECES: error: symm-linalg-matmul-to-gpu: clusters of 2 blocks: 1, 2 or 4 that split a stage's 1 piece(s) of `a` evenly
// MMA-AHEAD: error: symm-linalg-matmul-to-gpu: mma-gemv-ahead = -1 must be positive
// WGMMA-PREFETCH: error: symm-linalg-matmul-to-gpu: wgmma-gemv-prefetch = -5 must be positive
// WGMMA-ROWS: error: symm-linalg-matmul-to-gpu: wgmma-gemv-max-rows = 200: the wgmma GEMV takes calls of up to 17 to 128 rows (2 to 16 with wgmma-gemv-few)
// WGMMA-FEW: error: symm-linalg-matmul-to-gpu: wgmma-gemv-max-rows = 8: the wgmma GEMV takes calls of up to 17 to 128 rows (2 to 16 with wgmma-gemv-few)
// WGMMA-STAGE: error: symm-linalg-matmul-to-gpu: a wgmma stage of 48 weight rows: 64 to 256, whole rows of `a`'s 64-element pieces
// WGMMA-STAGES: error: symm-linalg-matmul-to-gpu: the wgmma ring needs at least 2 stages
// BK: error: symm-linalg-matmul-to-gpu: bk = 48 is not a multiple of 16 x 16 warps
// GEMV-COLUMNS: error: symm-linalg-matmul-to-gpu: gemv-columns = 12 is not a positive multiple of 8
// GEMV-THREADS: error: symm-linalg-matmul-to-gpu: the GEMV's 64 columns x 128 k-groups make 2048 threads per block for 2 weight(s) (whole warps, at most 1024)
// GEMV-UNROLL: error: symm-linalg-matmul-to-gpu: gemv-unroll = -1 must be positive
// GEMV-ROWS: error: symm-linalg-matmul-to-gpu: gemv-max-rows = 0: a GEMV takes 1 to 16 rows
// MMA-ROWS: error: symm-linalg-matmul-to-gpu: mma-gemv-rows = 12: the tensor-core GEMV takes 8 or 16 rows
// MMA-COLUMNS: error: symm-linalg-matmul-to-gpu: mma-gemv-columns = 48 is not a multiple of 32 (a warp's columns: 64, or 32 for weights stored n x k)
// MMA-THREADS: error: symm-linalg-matmul-to-gpu: the GEMV's 64 columns x 64 k-groups make 4096 threads per block for 2 weight(s) (whole warps, at most 1024)
// MMA-UNROLL: error: symm-linalg-matmul-to-gpu: mma-gemv-unroll = -2 must be positive

func.func @accumulates(%a: memref<?x4096xbf16>, %w: memref<4096x4096xbf16>, %c: memref<?x4096xbf16>) {
  // expected-remark@+1 {{keeps cuBLAS: adds to its output (no zero fill right before it); the generated kernel overwrites}}
  linalg.matmul ins(%a, %w : memref<?x4096xbf16>, memref<4096x4096xbf16>) outs(%c : memref<?x4096xbf16>)
  return
}

// -----

func.func @f32_operands(%a: memref<?x4096xf32>, %w: memref<4096x4096xf32>, %c: memref<?x4096xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x4096xf32>)
  // expected-remark@+1 {{keeps cuBLAS: the generated kernel takes bf16 operands}}
  linalg.matmul ins(%a, %w : memref<?x4096xf32>, memref<4096x4096xf32>) outs(%c : memref<?x4096xf32>)
  return
}

// -----

func.func @k_not_a_multiple_of_16(%a: memref<?x1000xbf16>, %w: memref<1000x4096xbf16>, %c: memref<?x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<?x4096xbf16>)
  // expected-remark@+1 {{keeps cuBLAS: K = 1000 is not a multiple of 16}}
  linalg.matmul ins(%a, %w : memref<?x1000xbf16>, memref<1000x4096xbf16>) outs(%c : memref<?x4096xbf16>)
  return
}

// -----

func.func @n_not_a_multiple_of_8(%a: memref<?x4096xbf16>, %w: memref<4096x1001xbf16>, %c: memref<?x1001xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<?x1001xbf16>)
  // expected-remark@+1 {{keeps cuBLAS: N = 1001 is not a multiple of 8 (the weight moves in 16-byte pieces)}}
  linalg.matmul ins(%a, %w : memref<?x4096xbf16>, memref<4096x1001xbf16>) outs(%c : memref<?x1001xbf16>)
  return
}

// -----

func.func @batch_accumulates(%a: memref<2x?x64xbf16>, %w: memref<2x64x64xbf16>, %c: memref<2x?x64xf32>) {
  // expected-remark@+1 {{keeps cuBLAS: accumulates into its output; the generated kernel overwrites}}
  linalg.batch_matmul ins(%a, %w : memref<2x?x64xbf16>, memref<2x64x64xbf16>) outs(%c : memref<2x?x64xf32>)
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
// The products are read after the epilogue too: the pair does not fuse
// (its kernel never writes them); each matmul takes a kernel of its own.
func.func @products_read_elsewhere(%x: memref<?x64xbf16>, %wg: memref<64x64xbf16>, %wu: memref<64x64xbf16>,
                                   %act: memref<?x64xbf16>, %copy: memref<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %zero = arith.constant 0.0 : bf16
  %gate = memref.alloc(%m) : memref<?x64xbf16>
  // expected-remark@+1 {{matmul 64x64: generated kernel @symm_matmul_0}}
  linalg.fill ins(%zero : bf16) outs(%gate : memref<?x64xbf16>)
  linalg.matmul ins(%x, %wg : memref<?x64xbf16>, memref<64x64xbf16>) outs(%gate : memref<?x64xbf16>)
  %up = memref.alloc(%m) : memref<?x64xbf16>
  // expected-remark@+1 {{matmul 64x64: generated kernel @symm_matmul_1}}
  linalg.fill ins(%zero : bf16) outs(%up : memref<?x64xbf16>)
  linalg.matmul ins(%x, %wu : memref<?x64xbf16>, memref<64x64xbf16>) outs(%up : memref<?x64xbf16>)
  // expected-remark@+1 {{not fused: the matmul pair's products are read elsewhere too}}
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x64xbf16>, memref<?x64xbf16>) outs(%act : memref<?x64xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %o: bf16):
    %y = arith.mulf %g, %u : bf16
    linalg.yield %y : bf16
  }
  memref.copy %gate, %copy : memref<?x64xbf16> to memref<?x64xbf16>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// The row statistic is a maximum, not a sum: the pair fuses without the
// prologue, which keeps its own kernels.
func.func @max_statistic(%x: memref<?x64xbf16>, %wg: memref<64x64xbf16>, %wu: memref<64x64xbf16>,
                         %act: memref<?x64xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x64xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %peak = memref.alloc(%m) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%peak : memref<?xf32>)
  // expected-remark@+1 {{not fused as the matmul pair's prologue: the row statistic is not a sum}}
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x64xbf16>) outs(%peak : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %s = arith.maximumf %f, %acc : f32
    linalg.yield %s : f32
  }
  %xn = memref.alloc(%m) : memref<?x64xbf16>
  linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %peak : memref<?x64xbf16>, memref<?xf32>) outs(%xn : memref<?x64xbf16>) {
  ^bb0(%v: bf16, %p: f32, %o: bf16):
    %f = arith.extf %v : bf16 to f32
    %y = arith.divf %f, %p : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }
  %gate = memref.alloc(%m) : memref<?x64xbf16>
  // expected-remark@+1 {{matmul pair (64x64 per weight) with the element-wise epilogue: generated kernel @symm_matmul_0}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x64xbf16>)
  linalg.matmul ins(%xn, %wg : memref<?x64xbf16>, memref<64x64xbf16>) outs(%gate : memref<?x64xbf16>)
  %up = memref.alloc(%m) : memref<?x64xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x64xbf16>)
  linalg.matmul ins(%xn, %wu : memref<?x64xbf16>, memref<64x64xbf16>) outs(%up : memref<?x64xbf16>)
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate, %up : memref<?x64xbf16>, memref<?x64xbf16>) outs(%act : memref<?x64xbf16>) {
  ^bb0(%g: bf16, %u: bf16, %o: bf16):
    %y = arith.mulf %g, %u : bf16
    linalg.yield %y : bf16
  }
  return
}

// -----

// The generated kernels' gpu.module is @symm_matmul_kernels: a program
// symbol of that name is an error at its definition (the pass would
// otherwise leave a redefinition behind; symm-fuzz found it).
// expected-error@+1 {{'func.func' @symm_matmul_kernels takes the name of the gpu.module that holds the generated kernels; rename it}}
func.func @symm_matmul_kernels(%a: memref<?x4096xbf16>, %w: memref<4096x4096xbf16>, %c: memref<?x4096xbf16>) {
  %zero = arith.constant 0.0 : bf16
  linalg.fill ins(%zero : bf16) outs(%c : memref<?x4096xbf16>)
  linalg.matmul ins(%a, %w : memref<?x4096xbf16>, memref<4096x4096xbf16>) outs(%c : memref<?x4096xbf16>)
  return
}

// -----

// Rows too long for the CUDA-core GEMV's shared memory: the tensor-core
// kernel takes one-row calls too, and the tensor-core GEMV, which reads
// rows without a prologue from global memory, 2 to 16 rows.
func.func @gemv_row_too_long(%a: memref<?x65536xbf16>, %w: memref<65536x64xbf16>, %c: memref<?x64xbf16>) {
  %zero = arith.constant 0.0 : bf16
  // expected-remark@+2 {{no GEMV for up to 1 row(s): 1 row(s) of K = 65536 do not fit in shared memory as f32}}
  // expected-remark@+1 {{matmul 65536x64: generated kernel @symm_matmul_0 (1x1 blocks of 512 threads, 111040 bytes of shared memory, 3 stages of 256 rows) (up to 16 row(s): the GEMV @symm_matmul_0_mma16, 1x1 blocks of 512 threads), chosen}}
  linalg.fill ins(%zero : bf16) outs(%c : memref<?x64xbf16>)
  linalg.matmul ins(%a, %w : memref<?x65536xbf16>, memref<65536x64xbf16>) outs(%c : memref<?x64xbf16>)
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
// A lone matmul whose consumer also reads a bias: the kernels take an
// epilogue of the product alone, so it stays a kernel of its own.
func.func @lone_matmul_bias_epilogue(%a: memref<?x4096xbf16>, %w: memref<4096x7168xbf16>, %bias: memref<7168xbf16>, %act: memref<?x7168xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %a, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : bf16
  %up = memref.alloc(%m) : memref<?x7168xbf16>
  // The matmul itself takes the generated kernels.
  // expected-remark@+1 {{matmul 4096x7168: generated kernel @symm_matmul_0}}
  linalg.fill ins(%zero : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul ins(%a, %w : memref<?x4096xbf16>, memref<4096x7168xbf16>) outs(%up : memref<?x7168xbf16>)
  // expected-remark@+1 {{not fused as the matmul's epilogue: it reads more than the product element by element (the generated kernels take an epilogue of the product alone, or of a gate and up pair's two)}}
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%up, %bias : memref<?x7168xbf16>, memref<7168xbf16>) outs(%act : memref<?x7168xbf16>) {
  ^bb0(%u: bf16, %b: bf16, %unused: bf16):
    %r = arith.addf %u, %b : bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %up : memref<?x7168xbf16>
  return
}

// -----

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// A lone matmul after an RMSNorm whose output is read again later: the
// norm stays a kernel of its own.
func.func @lone_matmul_prologue_read_again(%x: memref<?x4096xbf16>, %g: memref<4096xbf16>, %w: memref<4096x7168xbf16>, %c: memref<?x7168xbf16>, %kept: memref<?x4096xbf16>) {
  %c0 = arith.constant 0 : index
  %m = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %n = arith.constant 4096.0 : f32
  %sq = memref.alloc(%m) : memref<?xf32>
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
  // expected-remark@+1 {{not fused as the matmul's prologue: its output or the row statistic is read elsewhere too}}
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sq, %g : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>) outs(%xn : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %s: f32, %wt: bf16, %unused: bf16):
    %mean = arith.divf %s, %n : f32
    %inv = math.rsqrt %mean : f32
    %f = arith.extf %v : bf16 to f32
    %y = arith.mulf %f, %inv : f32
    %wf = arith.extf %wt : bf16 to f32
    %z = arith.mulf %y, %wf : f32
    %r = arith.truncf %z : f32 to bf16
    linalg.yield %r : bf16
  }
  // expected-remark@+1 {{matmul 4096x7168: generated kernel @symm_matmul_0}}
  linalg.fill ins(%zero_bf16 : bf16) outs(%c : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %w : memref<?x4096xbf16>, memref<4096x7168xbf16>) outs(%c : memref<?x7168xbf16>)
  memref.copy %xn, %kept : memref<?x4096xbf16> to memref<?x4096xbf16>
  memref.dealloc %sq : memref<?xf32>
  memref.dealloc %xn : memref<?x4096xbf16>
  return
}
