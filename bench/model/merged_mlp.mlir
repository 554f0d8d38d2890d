// The Llama-3-8B MLP block as vLLM's MergedColumnParallelLinear holds it:
// one gate_up weight of [2 F, D] in nn.Linear's layout (the gate's F rows,
// then the up projection's), read as its two row halves, and the down
// projection's [D, F]; each matmul reads its weight transposed. TP on the
// 2 ranks of @tp, bf16, D = 4096, F = 7168 of the 14336 MLP features a
// rank (the up half starts F D = 29360128 elements in). The token count M
// is dynamic, up to 2048. Checked against torch's F.linear by
// bench/model/matmul_check.py --merged.
//
//   xn  = RMSNorm(x) * norm_weight                       (f32 statistics, eps = 1e-5)
//   act = SiLU(xn @ w_gate_up[:F]^T) * (xn @ w_gate_up[F:]^T)
//   out = all_reduce(act @ w_down^T) + x
symm_mem.group @tp world_size(2)

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
// x @ W^T: W is n x k.
#lhs = affine_map<(m, n, k) -> (m, k)>
#weight_t = affine_map<(m, n, k) -> (n, k)>
#out = affine_map<(m, n, k) -> (m, n)>

func.func @merged_mlp(%x: memref<?x4096xbf16>, %norm_weight: memref<4096xbf16>,
                      %w_gate_up: memref<14336x4096xbf16>,
                      %w_down: memref<4096x7168xbf16>, %out: memref<?x4096xbf16>)
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

  // Gate and up projections, the two row halves of the merged weight.
  %w_gate = memref.subview %w_gate_up[0, 0] [7168, 4096] [1, 1]
      : memref<14336x4096xbf16> to memref<7168x4096xbf16, strided<[4096, 1]>>
  %w_up = memref.subview %w_gate_up[7168, 0] [7168, 4096] [1, 1]
      : memref<14336x4096xbf16> to memref<7168x4096xbf16, strided<[4096, 1], offset: 29360128>>
  %gate = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate : memref<?x7168xbf16>)
  linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                ins(%xn, %w_gate : memref<?x4096xbf16>, memref<7168x4096xbf16, strided<[4096, 1]>>)
                outs(%gate : memref<?x7168xbf16>)
  %up = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up : memref<?x7168xbf16>)
  linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                ins(%xn, %w_up : memref<?x4096xbf16>, memref<7168x4096xbf16, strided<[4096, 1], offset: 29360128>>)
                outs(%up : memref<?x7168xbf16>)

  // SiLU(gate) * up, in f32: gate / (1 + exp(-gate)) * up.
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

  // Down projection: this rank's partial sum of the block's output.
  %partial = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%partial : memref<?x4096xbf16>)
  linalg.matmul indexing_maps = [#lhs, #weight_t, #out]
                ins(%act, %w_down : memref<?x7168xbf16>, memref<4096x7168xbf16>)
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
  memref.dealloc %gate : memref<?x7168xbf16>
  memref.dealloc %up : memref<?x7168xbf16>
  memref.dealloc %act : memref<?x7168xbf16>
  return
}
