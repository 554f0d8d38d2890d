// Two Llama-3-8B MLP blocks (examples/llama_mlp.mlir, the same weights),
// tensor-parallel on the 2 ranks of @tp, with a host step between them:
// the program as CUDA-graph partitions with a fallback region in the
// middle (seeds 000 and 001).
//
//   h = MLP(x)                           partition 0 (a CUDA graph)
//   copy h to the host; s = 1 / rms of   fallback region: a device-to-host
//   the last token's row; copy s back      copy, a host loop, a host-to-
//   to the device                           device copy (eager)
//   out = MLP(h * s)                      partition 1 (a CUDA graph)
//
// The host step stands for what serving loops do on the CPU between
// device work (a sampled token id, a dynamic scale): the host reads what
// the device computed and sends back a scalar. cudagraph-partition splits
// the function there; cudagraph-hoist-allocs moves the destination of the
// copy back (`%scale`) into partition 0, so the graph owns it and every
// replay reuses it. Each partition is captured on its second call with the
// same arguments (token count and buffers) and replayed after; the host
// buffers are the application's pinned memory (`#cudagraph.host`).
//
// symm-compile examples/partitioned.mlir -o partitioned.o  (then examples/cpp)
symm_mem.group @tp world_size(2)

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#scalar = affine_map<(d0, d1) -> (0)>

func.func @partitioned(%x: memref<?x4096xbf16>, %norm_weight: memref<4096xbf16>,
                       %w_gate: memref<4096x7168xbf16>, %w_up: memref<4096x7168xbf16>,
                       %w_down: memref<7168x4096xbf16>,
                       %h_host: memref<?x4096xbf16, #cudagraph.host>,
                       %scale_host: memref<1xf32, #cudagraph.host>,
                       %out: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4096 = arith.constant 4096 : index
  %tokens = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %zero_bf16 = arith.constant 0.0 : bf16
  %one = arith.constant 1.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %tiny = arith.constant 1.0e-6 : f32
  %hidden = arith.constant 4096.0 : f32

  // Block 1: h = MLP(x).
  %h = memref.alloc(%tokens) : memref<?x4096xbf16>
  // RMSNorm: the sum of squares per row (a thread block per row), then
  // x * rsqrt(mean + eps) * weight.
  %sum_sq1 = memref.alloc(%tokens) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum_sq1 : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%sum_sq1 : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %xn1 = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum_sq1, %norm_weight : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
      outs(%xn1 : memref<?x4096xbf16>) {
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

  // Gate and up projections (cuBLAS, f32 accumulation).
  %gate1 = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate1 : memref<?x7168xbf16>)
  linalg.matmul ins(%xn1, %w_gate : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%gate1 : memref<?x7168xbf16>)
  %up1 = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up1 : memref<?x7168xbf16>)
  linalg.matmul ins(%xn1, %w_up : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%up1 : memref<?x7168xbf16>)

  // SiLU(gate) * up, in f32: gate / (1 + exp(-gate)) * up.
  %act1 = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate1, %up1 : memref<?x7168xbf16>, memref<?x7168xbf16>)
      outs(%act1 : memref<?x7168xbf16>) {
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
  %partial1 = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%partial1 : memref<?x4096xbf16>)
  linalg.matmul ins(%act1, %w_down : memref<?x7168xbf16>, memref<7168x4096xbf16>)
                outs(%partial1 : memref<?x4096xbf16>)

  // The all-reduce, then the residual (fused into the all-reduce kernel).
  %sum1 = symm_mem.all_reduce sum %partial1 group @tp
      : memref<?x4096xbf16> -> memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum1, %x : memref<?x4096xbf16>, memref<?x4096xbf16>)
      outs(%h : memref<?x4096xbf16>) {
  ^bb0(%s: bf16, %r: bf16, %unused: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    linalg.yield %o : bf16
  }
  memref.dealloc %sum_sq1 : memref<?xf32>
  memref.dealloc %xn1 : memref<?x4096xbf16>
  memref.dealloc %gate1 : memref<?x7168xbf16>
  memref.dealloc %up1 : memref<?x7168xbf16>
  memref.dealloc %act1 : memref<?x7168xbf16>

  // The host step: h to pinned host memory (the lowering waits for the
  // copy), then, by a host loop over the last token's row (the one a
  // decoder samples from), s = 1 / sqrt(mean(h_last^2) + 1e-6)
  // (`%inv_rms`), and s back to the device.
  memref.copy %h, %h_host : memref<?x4096xbf16> to memref<?x4096xbf16, #cudagraph.host>
  %last = arith.subi %tokens, %c1 : index
  %sum_sq_last = scf.for %j = %c0 to %c4096 step %c1 iter_args(%acc = %zero) -> (f32) {
    %v = memref.load %h_host[%last, %j] : memref<?x4096xbf16, #cudagraph.host>
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %next = arith.addf %acc, %sq : f32
    scf.yield %next : f32
  }
  %mean_sq = arith.divf %sum_sq_last, %hidden : f32
  %bounded = arith.addf %mean_sq, %tiny : f32
  %inv_rms = math.rsqrt %bounded : f32
  memref.store %inv_rms, %scale_host[%c0] : memref<1xf32, #cudagraph.host>
  %scale = memref.alloc() : memref<1xf32>
  memref.copy %scale_host, %scale : memref<1xf32, #cudagraph.host> to memref<1xf32>

  // Block 2: out = MLP(h * s).
  %scaled = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #scalar, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h, %scale : memref<?x4096xbf16>, memref<1xf32>) outs(%scaled : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %k: f32, %unused: bf16):
    %f = arith.extf %v : bf16 to f32
    %p = arith.mulf %f, %k : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  }
  // RMSNorm: the sum of squares per row (a thread block per row), then
  // x * rsqrt(mean + eps) * weight.
  %sum_sq2 = memref.alloc(%tokens) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum_sq2 : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%scaled : memref<?x4096xbf16>) outs(%sum_sq2 : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %sq = arith.mulf %f, %f : f32
    %s = arith.addf %sq, %acc : f32
    linalg.yield %s : f32
  }
  %xn2 = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #row, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%scaled, %sum_sq2, %norm_weight : memref<?x4096xbf16>, memref<?xf32>, memref<4096xbf16>)
      outs(%xn2 : memref<?x4096xbf16>) {
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

  // Gate and up projections (cuBLAS, f32 accumulation).
  %gate2 = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%gate2 : memref<?x7168xbf16>)
  linalg.matmul ins(%xn2, %w_gate : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%gate2 : memref<?x7168xbf16>)
  %up2 = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%up2 : memref<?x7168xbf16>)
  linalg.matmul ins(%xn2, %w_up : memref<?x4096xbf16>, memref<4096x7168xbf16>)
                outs(%up2 : memref<?x7168xbf16>)

  // SiLU(gate) * up, in f32: gate / (1 + exp(-gate)) * up.
  %act2 = memref.alloc(%tokens) : memref<?x7168xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%gate2, %up2 : memref<?x7168xbf16>, memref<?x7168xbf16>)
      outs(%act2 : memref<?x7168xbf16>) {
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
  %partial2 = memref.alloc(%tokens) : memref<?x4096xbf16>
  linalg.fill ins(%zero_bf16 : bf16) outs(%partial2 : memref<?x4096xbf16>)
  linalg.matmul ins(%act2, %w_down : memref<?x7168xbf16>, memref<7168x4096xbf16>)
                outs(%partial2 : memref<?x4096xbf16>)

  // The all-reduce, then the residual (fused into the all-reduce kernel).
  %sum2 = symm_mem.all_reduce sum %partial2 group @tp
      : memref<?x4096xbf16> -> memref<?x4096xbf16>
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%sum2, %scaled : memref<?x4096xbf16>, memref<?x4096xbf16>)
      outs(%out : memref<?x4096xbf16>) {
  ^bb0(%s: bf16, %r: bf16, %unused: bf16):
    %sf = arith.extf %s : bf16 to f32
    %rf = arith.extf %r : bf16 to f32
    %y = arith.addf %sf, %rf : f32
    %o = arith.truncf %y : f32 to bf16
    linalg.yield %o : bf16
  }
  memref.dealloc %sum_sq2 : memref<?xf32>
  memref.dealloc %xn2 : memref<?x4096xbf16>
  memref.dealloc %gate2 : memref<?x7168xbf16>
  memref.dealloc %up2 : memref<?x7168xbf16>
  memref.dealloc %act2 : memref<?x7168xbf16>
  memref.dealloc %h : memref<?x4096xbf16>
  memref.dealloc %scale : memref<1xf32>
  memref.dealloc %scaled : memref<?x4096xbf16>
  return
}
