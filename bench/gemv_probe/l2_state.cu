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
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../floor/stream_kernels.cuh"

namespace {

constexpr int kUnroll = 4;
constexpr int kThreads = 1024;
constexpr int kChunk = 16384;
constexpr int kDepth = 4;

struct Gpu {
  int sms = 0;
  unsigned *sink = nullptr;
};

// The generated GEMVs' load, 4 in flight a thread, 4 blocks an SM.
void read_ldg(const Gpu &g, const void *buffer, size_t bytes, int prefetch) {
  ldg<kUnroll, NoAllocateLoad, true><<<g.sms * 4, kThreads>>>(
      static_cast<const int4 *>(buffer), bytes / 16, prefetch, g.sink);
}

// The TMA's path: 16 KB copies, 4 in flight, a block an SM.
void read_bulk(const Gpu &g, const void *buffer, size_t bytes, bool evict_first) {
  int blocks = g.sms;
  size_t per_block = (bytes / blocks + kChunk - 1) / kChunk * kChunk;
  size_t shared = size_t(kDepth) * kChunk + kDepth * sizeof(unsigned long long);
  auto *kernel = evict_first ? bulk<true> : bulk<false>;
  kernel<<<blocks, 128, shared>>>(static_cast<const char *>(buffer), bytes, per_block, kChunk,
                                  kDepth, g.sink);
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
  for (auto *kernel : {bulk<false>, bulk<true>})
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
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
          read_ldg(g, p, kPair, 0);
          CHECK(cudaEventRecord(stop));
          if (!std::strcmp(way, "ldg")) read_ldg(g, down, kDown, 0);
          if (!std::strcmp(way, "pf_ldg")) read_ldg(g, down, kDown, 4);
          if (!std::strcmp(way, "bulk")) read_bulk(g, down, kDown, false);
          if (!std::strcmp(way, "bulk_ef")) read_bulk(g, down, kDown, true);
          if (!std::strcmp(way, "scrub")) read_ldg(g, scrub, kScrub, 0);
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
