// A compiled all-gather + matmul, called repeatedly so that it runs
// eagerly, then under capture, then as graph replays (agmm_check.cpp checks
// every call against a host reference).
symm_mem.group @tp world_size(2)

func.func @agmm(%a: memref<64x32xbf16>, %b: memref<32x48xbf16>, %c: memref<128x48xbf16>) {
  %shard = memref.alloc() : memref<64x32xbf16>
  memref.copy %a, %shard : memref<64x32xbf16> to memref<64x32xbf16>
  symm_mem.all_gather_matmul_out %shard, %b into %c group @tp : memref<64x32xbf16>, memref<32x48xbf16>, memref<128x48xbf16>
  return
}
