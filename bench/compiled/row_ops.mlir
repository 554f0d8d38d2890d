// Softmax and LayerNorm over the last dimension, written as linalg.generic
// row reductions, in bf16 with f32 statistics and a dynamic row count: each
// statistic compiles to a thread block per row (symm-linalg-rows-to-gpu).
// row_ops.cpp checks them against a host reference in double precision
// (bench/results/*issue12*); test/Integration/row_ops.mlir compiles it.
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>

func.func @softmax(%x: memref<?x4096xbf16>, %y: memref<?x4096xbf16>)
    attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x4096xbf16>
  %lowest = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %max = memref.alloc(%rows) : memref<?xf32>
  linalg.fill ins(%lowest : f32) outs(%max : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%max : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %m = arith.maximumf %f, %acc : f32
    linalg.yield %m : f32
  }
  %sum = memref.alloc(%rows) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %max : memref<?x4096xbf16>, memref<?xf32>) outs(%sum : memref<?xf32>) {
  ^bb0(%v: bf16, %m: f32, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %d = arith.subf %f, %m : f32
    %e = math.exp %d : f32
    %s = arith.addf %e, %acc : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %max, %sum : memref<?x4096xbf16>, memref<?xf32>, memref<?xf32>)
      outs(%y : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %m: f32, %s: f32, %unused: bf16):
    %f = arith.extf %v : bf16 to f32
    %d = arith.subf %f, %m : f32
    %e = math.exp %d : f32
    %p = arith.divf %e, %s : f32
    %r = arith.truncf %p : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %max : memref<?xf32>
  memref.dealloc %sum : memref<?xf32>
  return
}

func.func @layernorm(%x: memref<?x4096xbf16>, %gamma: memref<4096xbf16>, %beta: memref<4096xbf16>,
                     %y: memref<?x4096xbf16>) attributes {symm_mem.max_tokens = 2048 : i64} {
  %c0 = arith.constant 0 : index
  %rows = memref.dim %x, %c0 : memref<?x4096xbf16>
  %zero = arith.constant 0.0 : f32
  %width = arith.constant 4096.0 : f32
  %eps = arith.constant 1.0e-5 : f32
  %sum = memref.alloc(%rows) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sum : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x4096xbf16>) outs(%sum : memref<?xf32>) {
  ^bb0(%v: bf16, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %s = arith.addf %f, %acc : f32
    linalg.yield %s : f32
  }
  // The variance around the mean (two passes, as numerically sound
  // LayerNorms do).
  %sq = memref.alloc(%rows) : memref<?xf32>
  linalg.fill ins(%zero : f32) outs(%sq : memref<?xf32>)
  linalg.generic {indexing_maps = [#id, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %sum : memref<?x4096xbf16>, memref<?xf32>) outs(%sq : memref<?xf32>) {
  ^bb0(%v: bf16, %s: f32, %acc: f32):
    %f = arith.extf %v : bf16 to f32
    %mean = arith.divf %s, %width : f32
    %d = arith.subf %f, %mean : f32
    %d2 = arith.mulf %d, %d : f32
    %r = arith.addf %d2, %acc : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row, #row, #col, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum, %sq, %gamma, %beta : memref<?x4096xbf16>, memref<?xf32>, memref<?xf32>, memref<4096xbf16>, memref<4096xbf16>)
      outs(%y : memref<?x4096xbf16>) {
  ^bb0(%v: bf16, %s: f32, %q: f32, %g: bf16, %b: bf16, %unused: bf16):
    %f = arith.extf %v : bf16 to f32
    %mean = arith.divf %s, %width : f32
    %var = arith.divf %q, %width : f32
    %ve = arith.addf %var, %eps : f32
    %inv = math.rsqrt %ve : f32
    %d = arith.subf %f, %mean : f32
    %n = arith.mulf %d, %inv : f32
    %gf = arith.extf %g : bf16 to f32
    %bf = arith.extf %b : bf16 to f32
    %t = arith.mulf %n, %gf : f32
    %o = arith.addf %t, %bf : f32
    %r = arith.truncf %o : f32 to bf16
    linalg.yield %r : bf16
  }
  memref.dealloc %sum : memref<?xf32>
  memref.dealloc %sq : memref<?xf32>
  return
}
