// Does a streaming read run faster or slower depending on what the kernel
// before it left in L2? (issue 32, session 25; not yet run on a GPU)
//
// In the generated MLP block at 16 rows the gate/up pair ran about 2 µs
// faster on H200 (4 on H100) behind the default down-projection kernel
// than behind a 128 MB read or the wgmma GEMV. The default kernel first
// prefetches about 57% of its weight into L2 (`prefetch.global.L2`), then
// loads it with `ld.global.L1::no_allocate`; the wgmma GEMV copies its
// weight with the TMA under an L2 evict-first policy.
// (bench/results/2026-11-28-down16-h200.md). The layer benches call one
// layer again and again on the same weights, so one reading is that some
// of the pair's own lines survive the down projection in L2 only when
// those are read one way. A model's next call of that layer comes after 31
// other layers, so then the gain would be an artefact of the bench.
//
// Per iteration: A, a read of P (the pair's 117 MB, timed), then B, a read
// of D (the down projection's 58.7 MB) one of these ways:
//   none      nothing (A back to back)
//   ldg       16-byte ld.global.L1::no_allocate loads (the generated GEMVs')
//   pf_ldg    each thread prefetches the lines of its first 4 grid strides
//             into L2 (prefetch.global.L2: 59% of D), then loads them all
//   bulk      cp.async.bulk copies of 16 KB into shared memory (the TMA)
//   bulk_ef   the same under an L2 evict-first policy (the wgmma GEMV's)
//   scrub     ldg of a 128 MB buffer instead of D
// and A reads either the same copy of P every iteration (`same`, as the
// layer benches do) or the next of 3 copies (`rotate`, as a model's layers
// do). If the `same` times differ by B and the `rotate` times do not, the
// pair's gain is its own lines surviving in L2: a bench artefact.
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/l2_state bench/gemv_probe/l2_state.cu
//   /tmp/l2_state
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,              \
                   cudaGetErrorString(e));                                        \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

namespace {

constexpr int kUnroll = 4;
constexpr int kThreads = 1024;
constexpr int kChunk = 16384;
constexpr int kDepth = 4;

__device__ inline int4 load_no_allocate(const int4 *p) {
  int4 v;
  asm volatile("ld.global.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p));
  return v;
}

// Grid-stride 16-byte loads, kUnroll in flight a thread; with `prefetch`,
// the lines of the thread's first `prefetch` strides go to L2 first.
__global__ void read_ldg(const int4 *__restrict__ src, size_t vectors, int prefetch,
                         unsigned *sink) {
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t first = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  // One prefetch per 128-byte line: the thread whose vector starts it.
  for (int p = 0; p < prefetch; ++p) {
    size_t v = first + size_t(p) * stride;
    if (v < vectors && v % 8 == 0) asm volatile("prefetch.global.L2 [%0];" ::"l"(src + v));
  }
  unsigned acc = 0;
  size_t i = first;
  for (; i + (kUnroll - 1) * stride < vectors; i += kUnroll * stride) {
    int4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = load_no_allocate(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < vectors; i += stride) {
    int4 v = load_no_allocate(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

__device__ inline unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Each block copies a contiguous span into a ring of kDepth stages of
// kChunk bytes with cp.async.bulk (one mbarrier a stage); with
// `evict_first`, under an L2 evict-first policy.
__global__ void read_bulk(const char *__restrict__ src, size_t bytes, size_t per_block,
                          bool evict_first, unsigned *sink) {
  extern __shared__ __align__(128) char smem[];
  unsigned long long *bars = reinterpret_cast<unsigned long long *>(smem + size_t(kDepth) * kChunk);
  size_t begin = size_t(blockIdx.x) * per_block;
  size_t end = bytes < begin + per_block ? bytes : begin + per_block;
  if (begin >= end) return;
  size_t chunks = (end - begin + kChunk - 1) / kChunk;
  unsigned long long policy = 0;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  if (threadIdx.x == 0) {
    for (int s = 0; s < kDepth; ++s)
      asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(smem_addr(bars + s)));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  auto issue = [&](size_t c) {
    int s = int(c % kDepth);
    size_t at = begin + c * kChunk;
    unsigned size = unsigned(end - at < size_t(kChunk) ? end - at : size_t(kChunk));
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(smem_addr(bars + s)),
                 "r"(size));
    if (evict_first)
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
          " [%0], [%1], %2, [%3], %4;" ::"r"(smem_addr(smem + size_t(s) * kChunk)),
          "l"(src + at), "r"(size), "r"(smem_addr(bars + s)), "l"(policy)
          : "memory");
    else
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
              "r"(smem_addr(smem + size_t(s) * kChunk)),
          "l"(src + at), "r"(size), "r"(smem_addr(bars + s))
          : "memory");
  };
  unsigned acc = 0;
  if (threadIdx.x == 0)
    for (size_t c = 0; c < size_t(kDepth) && c < chunks; ++c) issue(c);
  for (size_t c = 0; c < chunks; ++c) {
    int s = int(c % kDepth);
    unsigned parity = unsigned(c / kDepth) & 1;
    asm volatile(
        "{\n .reg .pred p;\n waitLoop:\n"
        " mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n"
        " @!p bra waitLoop;\n}" ::"r"(smem_addr(bars + s)),
        "r"(parity));
    acc ^= reinterpret_cast<const unsigned *>(smem + size_t(s) * kChunk)[threadIdx.x];
    __syncthreads();
    if (threadIdx.x == 0 && c + kDepth < chunks) issue(c + kDepth);
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

struct Gpu {
  int sms = 0;
  unsigned *sink = nullptr;
};

void ldg(const Gpu &g, const void *buffer, size_t bytes, int prefetch) {
  read_ldg<<<g.sms * 4, kThreads>>>(static_cast<const int4 *>(buffer), bytes / 16, prefetch,
                                    g.sink);
}

void bulk(const Gpu &g, const void *buffer, size_t bytes, bool evict_first) {
  int blocks = g.sms;
  size_t per_block = (bytes / blocks + kChunk - 1) / kChunk * kChunk;
  size_t shared = size_t(kDepth) * kChunk + kDepth * sizeof(unsigned long long);
  read_bulk<<<blocks, kChunk / 4 < kThreads ? kChunk / 4 : kThreads, shared>>>(
      static_cast<const char *>(buffer), bytes, per_block, evict_first, g.sink);
}

}  // namespace

int main() {
  constexpr size_t kPair = 117440512, kDown = 58720256, kScrub = 134217728;
  constexpr int kCopies = 3, kIterations = 40;
  Gpu g;
  CHECK(cudaDeviceGetAttribute(&g.sms, cudaDevAttrMultiProcessorCount, 0));
  cudaDeviceProp prop{};
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s, %d SMs, L2 %d MB\n", prop.name, g.sms, prop.l2CacheSize >> 20);
  CHECK(cudaFuncSetAttribute(read_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             kDepth * kChunk + 64));
  CHECK(cudaMalloc(&g.sink, 4096 * sizeof(unsigned)));
  std::vector<void *> pair(kCopies);
  for (auto &p : pair) {
    CHECK(cudaMalloc(&p, kPair));
    CHECK(cudaMemset(p, 1, kPair));
  }
  void *down = nullptr, *scrub = nullptr;
  CHECK(cudaMalloc(&down, kDown));
  CHECK(cudaMemset(down, 2, kDown));
  CHECK(cudaMalloc(&scrub, kScrub));
  CHECK(cudaMemset(scrub, 3, kScrub));
  const char *ways[] = {"none", "ldg", "pf_ldg", "bulk", "bulk_ef", "scrub"};
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  for (int round = 0; round < 2; ++round) {
    for (int rotate = 0; rotate < 2; ++rotate) {
      for (const char *way : ways) {
        std::vector<float> times;
        for (int it = 0; it < kIterations; ++it) {
          const void *p = pair[rotate ? it % kCopies : 0];
          CHECK(cudaEventRecord(start));
          ldg(g, p, kPair, 0);
          CHECK(cudaEventRecord(stop));
          if (!std::strcmp(way, "ldg")) ldg(g, down, kDown, 0);
          if (!std::strcmp(way, "pf_ldg")) ldg(g, down, kDown, 4);
          if (!std::strcmp(way, "bulk")) bulk(g, down, kDown, false);
          if (!std::strcmp(way, "bulk_ef")) bulk(g, down, kDown, true);
          if (!std::strcmp(way, "scrub")) ldg(g, scrub, kScrub, 0);
          CHECK(cudaGetLastError());
          CHECK(cudaEventSynchronize(stop));
          float ms = 0;
          CHECK(cudaEventElapsedTime(&ms, start, stop));
          if (it >= 4) times.push_back(ms * 1000.0f);
        }
        CHECK(cudaDeviceSynchronize());
        std::sort(times.begin(), times.end());
        float median = times[times.size() / 2];
        std::printf("round %d  P %-6s  after %-7s  A: median %6.1f us (%.2f TB/s), best %6.1f us\n",
                    round + 1, rotate ? "rotate" : "same", way, median,
                    kPair / (median * 1e-6) / 1e12, times.front());
      }
    }
  }
  for (auto p : pair) CHECK(cudaFree(p));
  CHECK(cudaFree(down));
  CHECK(cudaFree(scrub));
  CHECK(cudaFree(g.sink));
  return 0;
}
