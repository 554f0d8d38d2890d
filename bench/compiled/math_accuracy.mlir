// Every math op a model uses, on the GPU, element by element: checked
// against a host reference in double precision by math_accuracy.cpp (ULP
// bounds there). test/Integration/math_accuracy.mlir compiles it; the
// device machine runs it (bench/results/*issue12*).
//
//   symm-compile bench/compiled/math_accuracy.mlir -o math_accuracy.o
#id = affine_map<(d0) -> (d0)>

func.func @math_ops(%x: memref<65536xf32>, %y: memref<65536xf32>,
    %exp: memref<65536xf32>, %exp2: memref<65536xf32>, %log: memref<65536xf32>, %tanh: memref<65536xf32>, %erf: memref<65536xf32>, %rsqrt: memref<65536xf32>, %sqrt: memref<65536xf32>, %sin: memref<65536xf32>, %cos: memref<65536xf32>, %powf: memref<65536xf32>) {
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%exp : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%exp2 : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.exp2 %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%log : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.log %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%tanh : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.tanh %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%erf : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.erf %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%rsqrt : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.rsqrt %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%sqrt : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.sqrt %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%sin : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.sin %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%cos : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.cos %v : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%x, %y : memref<65536xf32>, memref<65536xf32>) outs(%powf : memref<65536xf32>) {
  ^bb0(%v: f32, %w: f32, %o: f32):
    %r = math.powf %v, %w : f32
    linalg.yield %r : f32
  }
  return
}
