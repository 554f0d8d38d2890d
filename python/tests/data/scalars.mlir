// Scalar arguments beside a buffer: y = x * a + n (n an integer), for the
// package's checks of scalar types.
func.func @axpn(%x: memref<64xf32>, %a: f32, %n: i64, %y: memref<64xf32>) {
  %nf = arith.sitofp %n : i64 to f32
  linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>],
                  iterator_types = ["parallel"]}
      ins(%x : memref<64xf32>) outs(%y : memref<64xf32>) {
  ^bb0(%v: f32, %o: f32):
    %p = arith.mulf %v, %a : f32
    %s = arith.addf %p, %nf : f32
    linalg.yield %s : f32
  }
  return
}
