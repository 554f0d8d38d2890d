// Probe (issue 32, session 32; not shipped): what staging the call's rows
// of `a` costs a GEMV whose every block stages the same rows, and whether
// a cluster's blocks sharing one copy (TMA multicast) cut it.
//
// At 16 rows the MLP block's pair stages 16 x 4096 bf16 (128 KB) in each
// of its 112 blocks before its loop; the down projection 16 x 3584 (its
// K slice, 112 KB) in each of 128. Every block reads the same bytes, so
// L2 serves 14.7 MB a kernel. band_read.cu measured this staging at about
// 2.5 µs of a kernel run alone. Here the staging alone, in a CUDA graph of
// 30 kernels (the rows stay in L2, as in the layer, where the kernel
// before wrote them): one block an SM, 512 threads.
//   ld     each thread copies 16-byte vectors, 7 loads in flight (as
//          band_read.cu's staging);
//   bulk   one cp.async.bulk a row (global to this block's shared memory),
//          completing on an mbarrier;
//   mcN    clusters of N blocks: block r of a cluster copies rows
//          r, r + N, ... with .multicast::cluster to all N blocks, each
//          block's mbarrier expecting all 16 rows.
// Rows sit `K * 2 + 32` bytes apart in shared memory (the GEMVs' padded
// stride). A block then sums a word of every row so that nothing is
// skipped.
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/stage_multicast bench/gemv_probe/stage_multicast.cu
//   /tmp/stage_multicast
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "../floor/stream_kernels.cuh"  // CHECK, smem_addr

constexpr int ROWS = 16;

__device__ unsigned fold(const char *rows, int k, size_t pitch) {
  unsigned acc = 0;
  for (int r = 0; r < ROWS; ++r)
    acc ^= reinterpret_cast<const unsigned *>(rows + r * pitch)[threadIdx.x % (k / 2)];
  return acc;
}

// Threads copy the rows (k bf16 each, `lda` elements apart in global).
__global__ void stage_ld(const int4 *a, int k, int lda, unsigned *sink) {
  extern __shared__ __align__(128) char rows[];
  size_t pitch = size_t(k) * 2 + 32;
  stage_rows(rows, a, ROWS, k / 8, lda / 8, pitch);
  __syncthreads();
  unsigned acc = fold(rows, k, pitch);
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

// One bulk copy a row into this block, or (CLUSTER > 1) this block's share
// of the rows multicast to the cluster's blocks.
template <int CLUSTER>
__global__ void stage_bulk(const char *a, int k, int lda, unsigned *sink) {
  extern __shared__ __align__(128) char rows[];
  __shared__ __align__(8) unsigned long long bar;
  size_t pitch = size_t(k) * 2 + 32;
  unsigned bytes = unsigned(k) * 2;
  unsigned rank = 0;
  if (CLUSTER > 1) asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(smem_addr(&bar)));
    asm volatile("fence.mbarrier_init.release.cluster;");
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(smem_addr(&bar)), "r"(bytes * ROWS));
  }
  // Every block's barrier armed before any block's copy lands in it.
  if (CLUSTER > 1) {
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  } else {
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    for (int r = rank; r < ROWS; r += CLUSTER) {
      const char *src = a + size_t(r) * lda * 2;
      unsigned dst = smem_addr(rows + r * pitch);
      if (CLUSTER > 1) {
        unsigned short mask = (1u << CLUSTER) - 1;
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
            " [%0], [%1], %2, [%3], %4;" ::"r"(dst),
            "l"(src), "r"(bytes), "r"(smem_addr(&bar)), "h"(mask)
            : "memory");
      } else {
        asm volatile(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
            "l"(src), "r"(bytes), "r"(smem_addr(&bar))
            : "memory");
      }
    }
  }
  asm volatile(
      "{\n .reg .pred p;\n waitLoop:\n"
      " mbarrier.try_wait.parity.shared.b64 p, [%0], 0;\n"
      " @!p bra waitLoop;\n}" ::"r"(smem_addr(&bar)));
  unsigned acc = fold(rows, k, pitch);
  // No block leaves while a peer's copies may still write into it.
  if (CLUSTER > 1)
    asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

template <class Launch>
float us_per_kernel(cudaStream_t s, Launch launch) {
  const int N = 30, REPLAYS = 20;
  float ms = graph_replays_ms(s, 3, REPLAYS, [&] {
    for (int i = 0; i < N; ++i) launch();
  });
  return ms * 1000.f / (REPLAYS * N);
}

template <int CLUSTER>
void launch_bulk(cudaStream_t s, int grid, int smem, const char *a, int k, int lda, unsigned *sink) {
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(512);
  config.dynamicSmemBytes = smem;
  config.stream = s;
  cudaLaunchAttribute attribute[1];
  attribute[0].id = cudaLaunchAttributeClusterDimension;
  attribute[0].val.clusterDim.x = CLUSTER;
  attribute[0].val.clusterDim.y = 1;
  attribute[0].val.clusterDim.z = 1;
  config.attrs = attribute;
  config.numAttrs = 1;
  CHECK(cudaLaunchKernelEx(&config, stage_bulk<CLUSTER>, a, k, lda, sink));
}

int main() {
  struct Shape {
    const char *name;
    int k, lda, grid;
  } shapes[] = {
      {"pair: 16 x 4096 in 112 blocks", 4096, 4096, 112},
      {"down: 16 x 3584 (a K slice of 7168) in 128 blocks", 3584, 7168, 128},
  };
  char *a;
  CHECK(cudaMalloc(&a, ROWS * 7168 * 2));
  CHECK(cudaMemset(a, 1, ROWS * 7168 * 2));
  unsigned *sink;
  CHECK(cudaMalloc(&sink, 4096 * 4));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int SMEM = 200 << 10;  // one block an SM
  CHECK(cudaFuncSetAttribute(stage_ld, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CHECK(cudaFuncSetAttribute(stage_bulk<1>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CHECK(cudaFuncSetAttribute(stage_bulk<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CHECK(cudaFuncSetAttribute(stage_bulk<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CHECK(cudaFuncSetAttribute(stage_bulk<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM));
  CHECK(cudaFuncSetAttribute(stage_bulk<8>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  for (auto &sh : shapes) {
    const char *name = sh.name;
    int k = sh.k, lda = sh.lda, grid = sh.grid;
    float empty = us_per_kernel(s, [&] { stage_ld<<<grid, 512, SMEM, s>>>(reinterpret_cast<const int4 *>(a), 8, 8, sink); });
    std::printf("%s: a block staging one row of 8 elements (launch + drain): %.2f us\n", name, empty);
    std::printf("%s: ld (threads): %.2f us\n", name,
                us_per_kernel(s, [&] { stage_ld<<<grid, 512, SMEM, s>>>(reinterpret_cast<const int4 *>(a), k, lda, sink); }));
    std::printf("%s: bulk, a copy a row: %.2f us\n", name,
                us_per_kernel(s, [&] { launch_bulk<1>(s, grid, SMEM, a, k, lda, sink); }));
    std::printf("%s: multicast, clusters of 2: %.2f us\n", name,
                us_per_kernel(s, [&] { launch_bulk<2>(s, grid, SMEM, a, k, lda, sink); }));
    std::printf("%s: multicast, clusters of 4: %.2f us\n", name,
                us_per_kernel(s, [&] { launch_bulk<4>(s, grid, SMEM, a, k, lda, sink); }));
    if (grid % 8 == 0)
      std::printf("%s: multicast, clusters of 8: %.2f us\n", name,
                  us_per_kernel(s, [&] { launch_bulk<8>(s, grid, SMEM, a, k, lda, sink); }));
  }
  return 0;
}
