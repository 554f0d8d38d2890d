// The probes' deterministic bf16 fill: uniform in [-scale / 2, scale / 2)
// from a hash of each element's index and `seed`; shared by lt_algos.cu and
// stream_k_down.cu.
#pragma once
#include <cuda_bf16.h>

__global__ void fill(__nv_bfloat16 *p, size_t n, unsigned seed, float scale) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned h = (unsigned)i * 2654435761u ^ seed;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xffff) / 65536.f - 0.5f) * scale);
  }
}
