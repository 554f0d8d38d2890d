// An attention block's QKV projection after its input RMSNorm, one rank
// (world size 1), bf16: hidden size D = 4096, 6144 projected columns
// (Llama-3-8B's q, k and v at TP 1: 4096 + 1024 + 1024). The token count M
// is dynamic, up to 2048. A check of a lone matmul with the norm as its
// fused prologue and no epilogue (bench/model/matmul_check.py --qkv).
//
//   xn  = RMSNorm(x) * norm_weight        (f32 statistics, eps = 1e-5)
//   qkv = xn @ w_qkv
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @qkv(%x: memref<?x4096xbf16>, %norm_weight: memref<4096xbf16>,
               %w_qkv: memref<4096x6144xbf16>, %out: memref<?x6144xbf16>)
    attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %tokens = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 4096.0 : f32

  // RMSNorm: the sum of squares per row (a thread block per row), then
  // x * rsqrt(mean + eps) * weight.
  %sum_sq = memref.alloc(%tokens) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%sum_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %xn = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum_sq, %norm_weight : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
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

  // The projection.
  linalg.fill ins(%zero_bf16 : bf16) outs(%out : memref<?x6144xbf16>)
  linalg.matmul ins(%xn, %w_qkv : memref<?x4096xbf16>, memref<4096x6144xbf16>)
                outs(%out : memref<?x6144xbf16>)
  memref.dealloc %sum_sq : memref<?xf32>
  memref.dealloc %xn : memref<?x4096xbf16>
  return
}
