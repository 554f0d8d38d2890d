// A tensor-parallel linear layer with a ReLU, as a user writes it: each rank
// multiplies its shard of the activations by its shard of the weights, the
// partial sums are all-reduced across the group, then bias and ReLU apply.
// The user never says where buffers live; `%partial` must become a
// symmetric buffer, which the compiler works out (symm-mem-realize).
//
//   symm-opt examples/tp_layer.mlir
//   symm-opt examples/tp_layer.mlir --pass-pipeline=\
//     'builtin.module(func.func(symm-mem-verify-groups),symm-mem-middle-end,canonicalize)'

symm_mem.group @tp world_size(2)

#map = affine_map<(d0, d1) -> (d0, d1)>
#bias = affine_map<(d0, d1) -> (d1)>

func.func @tp_layer(%x: memref<128x512xbf16>, %w: memref<512x256xbf16>,
                    %b: memref<256xbf16>, %y: memref<128x256xbf16>) {
  %zero = arith.constant 0.0 : bf16
  %partial = memref.alloc() : memref<128x256xbf16>
  linalg.fill ins(%zero : bf16) outs(%partial : memref<128x256xbf16>)
  linalg.matmul ins(%x, %w : memref<128x512xbf16>, memref<512x256xbf16>)
                outs(%partial : memref<128x256xbf16>)
  %sum = symm_mem.all_reduce sum %partial group @tp
      : memref<128x256xbf16> -> memref<128x256xbf16>
  linalg.generic {indexing_maps = [#map, #bias, #map],
                  iterator_types = ["parallel", "parallel"]}
      ins(%sum, %b : memref<128x256xbf16>, memref<256xbf16>)
      outs(%y : memref<128x256xbf16>) {
  ^bb0(%s: bf16, %bias: bf16, %out: bf16):
    %biased = arith.addf %s, %bias : bf16
    %relu = arith.maximumf %biased, %zero : bf16
    linalg.yield %relu : bf16
  }
  memref.dealloc %partial : memref<128x256xbf16>
  return
}
