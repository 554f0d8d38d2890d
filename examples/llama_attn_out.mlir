// The end of a Llama-3-8B attention block and the start of the next one,
// tensor-parallel on the 2 ranks of @tp, in bf16: each rank holds 16 of the
// 32 heads (2048 of the 4096 attention features) and the matching 2048 rows
// of the output projection. The token count M is dynamic, up to 2048
// (symm_mem.max_tokens), as in examples/llama_mlp.mlir.
//
//   p        = attn @ w_o                   (a partial sum on each rank)
//   residual = all_reduce(p) + residual_in  (fused into the all-reduce)
//   normed   = RMSNorm(residual) * weight   (the next layer's input norm)
//
// symm-compile examples/llama_attn_out.mlir -o llama_attn_out.o
symm_mem.group @tp world_size(2)

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @llama_attn_out(%attn: memref<?x2048xbf16>, %w_o: memref<2048x4096xbf16>,
                          %residual_in: memref<?x4096xbf16>, %norm_weight: memref<4096xbf16>,
                          %residual: memref<?x4096xbf16>, %normed: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %tokens = memref.dim %attn, %c0 : memref<?x2048xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 4096.0 : f32

  %partial = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%partial : memref<?x4096xbf16>)
  linalg.matmul ins(%attn, %w_o : memref<?x2048xbf16>, memref<2048x4096xbf16>)
                outs(%partial : memref<?x4096xbf16>)
  %sum = symm_mem.all_reduce sum %partial group @tp
      : memref<?x4096xbf16> -> memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum, %residual_in : memref<?x4096xbf16>, memref<?x4096xbf16>)
      outs(%residual : memref<?x4096xbf16>) {
  ^bb0(%s: bf16, %r: bf16, %unused: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    linalg.yield %o : bf16
  }

  // The next layer's RMSNorm of the new residual stream.
  %sum_sq = memref.alloc(%tokens) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%residual : memref<?x4096xbf16>) outs(%sum_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%residual, %sum_sq, %norm_weight : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
      outs(%normed : memref<?x4096xbf16>) {
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
  memref.dealloc %sum_sq : memref<?xf32>
  return
}
