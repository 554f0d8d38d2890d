// A tensor-parallel MLP, the shape of a transformer's feed-forward block,
// two layers deep, on the ranks of @tp (Megatron-style sharding).
//
// Every rank holds the full activations x (64 x 256) and its shards of each
// layer's weights: w1 columns (256 x 512/rank) and w2 rows (512/rank x 256).
// Per layer:  h = relu(x @ w1)          (no communication)
//             p = h @ w2                (a partial sum on each rank)
//             x = all_reduce(p) + b + x (bias and residual)
// The all-reduce's input is the matmul's output, so symm-mem-realize puts
// it in symmetric memory without a copy; symm-mem-fuse-epilogue folds the
// bias + residual into the all-reduce kernel.
//
// symm-compile examples/tp_mlp.mlir -o tp_mlp.o  (then see examples/cpp).
symm_mem.group @tp world_size(2)

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>

func.func @tp_mlp(%x: memref<64x256xf32>,
                  %w1a: memref<256x512xf32>, %w2a: memref<512x256xf32>, %ba: memref<256xf32>,
                  %w1b: memref<256x512xf32>, %w2b: memref<512x256xf32>, %bb: memref<256xf32>,
                  %out: memref<64x256xf32>) {
  %zero = arith.constant 0.0 : f32

  // Layer 1.
  %h1 = memref.alloc() : memref<64x512xf32>
  linalg.fill ins(%zero : f32) outs(%h1 : memref<64x512xf32>)
  linalg.matmul ins(%x, %w1a : memref<64x256xf32>, memref<256x512xf32>) outs(%h1 : memref<64x512xf32>)
  %a1 = memref.alloc() : memref<64x512xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h1 : memref<64x512xf32>) outs(%a1 : memref<64x512xf32>) {
  ^bb0(%v: f32, %unused: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  %p1 = memref.alloc() : memref<64x256xf32>
  linalg.fill ins(%zero : f32) outs(%p1 : memref<64x256xf32>)
  linalg.matmul ins(%a1, %w2a : memref<64x512xf32>, memref<512x256xf32>) outs(%p1 : memref<64x256xf32>)
  %s1 = symm_mem.all_reduce sum %p1 group @tp : memref<64x256xf32> -> memref<64x256xf32>
  %x1 = memref.alloc() : memref<64x256xf32>
  linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s1, %ba, %x : memref<64x256xf32>, memref<256xf32>, memref<64x256xf32>)
      outs(%x1 : memref<64x256xf32>) {
  ^bb0(%s: f32, %b: f32, %res: f32, %unused: f32):
    %t = arith.addf %s, %b : f32
    %u = arith.addf %t, %res : f32
    linalg.yield %u : f32
  }

  // Layer 2, into %out.
  %h2 = memref.alloc() : memref<64x512xf32>
  linalg.fill ins(%zero : f32) outs(%h2 : memref<64x512xf32>)
  linalg.matmul ins(%x1, %w1b : memref<64x256xf32>, memref<256x512xf32>) outs(%h2 : memref<64x512xf32>)
  %a2 = memref.alloc() : memref<64x512xf32>
  linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%h2 : memref<64x512xf32>) outs(%a2 : memref<64x512xf32>) {
  ^bb0(%v: f32, %unused: f32):
    %r = arith.maximumf %v, %zero : f32
    linalg.yield %r : f32
  }
  %p2 = memref.alloc() : memref<64x256xf32>
  linalg.fill ins(%zero : f32) outs(%p2 : memref<64x256xf32>)
  linalg.matmul ins(%a2, %w2b : memref<64x512xf32>, memref<512x256xf32>) outs(%p2 : memref<64x256xf32>)
  %s2 = symm_mem.all_reduce sum %p2 group @tp : memref<64x256xf32> -> memref<64x256xf32>
  linalg.generic {indexing_maps = [#id, #row, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%s2, %bb, %x1 : memref<64x256xf32>, memref<256xf32>, memref<64x256xf32>)
      outs(%out : memref<64x256xf32>) {
  ^bb0(%s: f32, %b: f32, %res: f32, %unused: f32):
    %t = arith.addf %s, %b : f32
    %u = arith.addf %t, %res : f32
    linalg.yield %u : f32
  }
  memref.dealloc %h1 : memref<64x512xf32>
  memref.dealloc %a1 : memref<64x512xf32>
  memref.dealloc %x1 : memref<64x256xf32>
  memref.dealloc %h2 : memref<64x512xf32>
  memref.dealloc %a2 : memref<64x512xf32>
  return
}
