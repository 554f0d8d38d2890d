// The tensor-parallel half of one Llama-3-8B decoder layer of
// examples/llama_decoder.mlir with its weights as Hugging Face checkpoints,
// vLLM and TensorRT-LLM store them: nn.Linear's [out_features,
// in_features], so each matmul reads its weight transposed (`x @ W^T`, the
// maps (m, k), (n, k), (m, n)). TP on the 2 ranks of @tp, bf16, D = 4096:
// o_proj is 4096 x 2048 (columns of o_proj.weight), gate and up 7168 x 4096
// (rows of gate_proj.weight and up_proj.weight), down 4096 x 7168 (columns
// of down_proj.weight). The token count M is dynamic, up to 2048. Timed and
// checked against torch's F.linear by bench/model/decoder_bench.py
// (LAYER_BLOCK=linear).
//
//   h      = all_reduce(attn @ w_o^T) + residual_in
//   xn     = RMSNorm(h) * post_norm
//   act    = SiLU(xn @ w_gate^T) * (xn @ w_up^T)
//   out    = all_reduce(act @ w_down^T) + h
//   normed = RMSNorm(out) * next_norm
symm_mem.group @tp world_size(2)

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// x @ W^T: W is n x k.
#lhs = affine_map<(m, n, k) -> (m, k)>
#weight_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>

func.func @linear_decoder(%attn: memref<?x2048xbf16>, %w_o: memref<4096x2048xbf16>,
                         %residual_in: memref<?x4096xbf16>, %post_norm: memref<4096xbf16>,
                         %w_gate: memref<7168x4096xbf16>, %w_up: memref<7168x4096xbf16>,
                         %w_down: memref<4096x7168xbf16>, %next_norm: memref<4096xbf16>,
                         %out: memref<?x4096xbf16>, %normed: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %tokens = memref.dim %attn, %c0 : memref<?x2048xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %hidden = arith.constant 4096.0 : f32

  // The attention output projection: this rank's partial sum.
  %o_partial = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%o_partial : memref<?x4096xbf16>)
  linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                ins(%attn, %w_o : memref<?x2048xbf16>, memref<4096x2048xbf16>)
                outs(%o_partial : memref<?x4096xbf16>)
  %o_sum = symm_mem.all_reduce sum %o_partial group @tp
      : memref<?x4096xbf16> -> memref<?x4096xbf16>
  %h = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%o_sum, %residual_in : memref<?x4096xbf16>, memref<?x4096xbf16>)
      outs(%h : memref<?x4096xbf16>) {
  ^bb0(%s: bf16, %r: bf16, %unused: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    linalg.yield %o : bf16
  }

  // The post-attention RMSNorm of the residual stream.
  %h_sq = memref.alloc(%tokens) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%h_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%h : memref<?x4096xbf16>) outs(%h_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %xn = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %h_sq, %post_norm : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
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

  // Gate and up projections, SiLU(gate) * up in f32.
  %gate = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
  linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                ins(%xn, %w_gate : memref<?x4096xbf16>, memref<7168x4096xbf16>)
                outs(%gate : memref<?x7168xbf16>)
  %up = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                ins(%xn, %w_up : memref<?x4096xbf16>, memref<7168x4096xbf16>)
                outs(%up : memref<?x7168xbf16>)
  %act = memref.alloc(%tokens) : memref<?x7168xbf16>
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

  // The down projection's partial sum, its all-reduce and the residual.
  %d_partial = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%d_partial : memref<?x4096xbf16>)
  linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                ins(%act, %w_down : memref<?x7168xbf16>, memref<4096x7168xbf16>)
                outs(%d_partial : memref<?x4096xbf16>)
  %d_sum = symm_mem.all_reduce sum %d_partial group @tp
      : memref<?x4096xbf16> -> memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%d_sum, %h : memref<?x4096xbf16>, memref<?x4096xbf16>)
      outs(%out : memref<?x4096xbf16>) {
  ^bb0(%s: bf16, %r: bf16, %unused: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    linalg.yield %o : bf16
  }

  // The next layer's input RMSNorm.
  %out_sq = memref.alloc(%tokens) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%out_sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%out : memref<?x4096xbf16>) outs(%out_sq : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%out, %out_sq, %next_norm : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
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
  memref.dealloc %h : memref<?x4096xbf16>
  memref.dealloc %h_sq : memref<?xf32>
  memref.dealloc %xn : memref<?x4096xbf16>
  memref.dealloc %gate : memref<?x7168xbf16>
  memref.dealloc %up : memref<?x7168xbf16>
  memref.dealloc %act : memref<?x7168xbf16>
  memref.dealloc %out_sq : memref<?xf32>
  return
}
