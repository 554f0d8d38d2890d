// A small layer for the package's CPU tests: an element-wise kernel over a
// token-count-sized buffer, written into the caller's output.
func.func @scale(%x: memref<?x64xbf16>, %w: memref<64xbf16>, %y: memref<?x64xbf16>)
    attributes {symm_mem.max_tokens = 128 : i64} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x64xbf16>
  linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>,
                                   affine_map<(i, j) -> (i, j)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : memref<?x64xbf16>, memref<64xbf16>) outs(%y : memref<?x64xbf16>) {
  ^bb0(%a: bf16, %b: bf16, %o: bf16):
    %p = arith.mulf %a, %b : bf16
    linalg.yield %p : bf16
  }
  return
}
