// A non-gated (GPT-style) MLP block, tensor-parallel on the 2 ranks of @tp,
// in bf16: hidden size D = 4096, MLP size 14336 (7168 columns of the up
// projection and rows of the down projection a rank). The token count M
// is dynamic, up to 2048. A check of the generated kernels' fusions into a
// lone matmul (bench/model/matmul_check.py --gelu): the RMSNorm as the up
// projection's prologue, GELU as its epilogue.
//
//   xn  = RMSNorm(x) * norm_weight                     (f32 statistics, eps = 1e-5)
//   act = GELU(xn @ w_up)                              (tanh approximation)
//   out = all_reduce(act @ w_down) + x
symm_mem.group @tp world_size(2)

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @gelu_mlp(%x: memref<?x4096xbf16>, %norm_weight: memref<4096xbf16>,
                     %w_up: memref<4096x7168xbf16>,
                     %w_down: memref<7168x4096xbf16>, %out: memref<?x4096xbf16>)
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

  // The up projection, then GELU (tanh approximation) in f32:
  // 0.5 u (1 + tanh(sqrt(2 / pi) (u + 0.044715 u^3))).
  %up = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul ins(%xn, %w_up : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%up : memref<?x7168xbf16>)
  %act = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%up : memref<?x7168xbf16>) outs(%act : memref<?x7168xbf16>) {
  ^bb0(%u: bf16, %unused: bf16):
    %uf = arith.extf %u : bf16 to f32
    %half = arith.constant 0.5 : f32
    %c = arith.constant 0.7978845608 : f32
    %k = arith.constant 0.044715 : f32
    %u2 = arith.mulf %uf, %uf : f32
    %u3 = arith.mulf %u2, %uf : f32
    %t0 = arith.mulf %k, %u3 : f32
    %t1 = arith.addf %uf, %t0 : f32
    %t2 = arith.mulf %c, %t1 : f32
    %th = math.tanh %t2 : f32
    %t3 = arith.addf %th, %one : f32
    %t4 = arith.mulf %half, %uf : f32
    %y = arith.mulf %t4, %t3 : f32
    %r = arith.truncf %y : f32 to bf16
    linalg.yield %r : bf16
  }

  // Down projection: this rank's partial sum of the block's output.
  %partial = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%partial : memref<?x4096xbf16>)
  linalg.matmul ins(%act, %w_down : memref<?x7168xbf16>, memref<7168x4096xbf16>)
                outs(%partial : memref<?x4096xbf16>)

  // The all-reduce, then the residual (fused into the all-reduce kernel).
  %sum = symm_mem.all_reduce sum %partial group @tp
      : memref<?x4096xbf16> -> memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %x : memref<?x4096xbf16>, memref<?x4096xbf16>)
      outs(%out : memref<?x4096xbf16>) {
  ^bb0(%s: bf16, %r: bf16, %unused: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    linalg.yield %o : bf16
  }
  memref.dealloc %sum_sq : memref<?xf32>
  memref.dealloc %xn : memref<?x4096xbf16>
  memref.dealloc %up : memref<?x7168xbf16>
  memref.dealloc %act : memref<?x7168xbf16>
  return
}
