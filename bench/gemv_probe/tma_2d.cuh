// The probes' 2-D TMA copy into shared memory at a 32-bit shared address,
// completing on an mbarrier, with an optional L2 cache policy (sm_90);
// shared by wgmma_gemm.cu and stream_k_down.cu.
#pragma once
#include <cuda.h>

#include "mbarrier.cuh"

__device__ __forceinline__ void tma_2d(uint32_t dst, const CUtensorMap *map, int x, int y,
                                       uint64_t *bar, uint64_t policy, bool hint) {
  if (hint)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
        "l"(map), "r"(x), "r"(y), "r"(smem(bar)), "l"(policy)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
        "l"(map), "r"(x), "r"(y), "r"(smem(bar))
        : "memory");
}
