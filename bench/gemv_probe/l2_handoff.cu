// Probe (issue 32, session 32; not shipped): can a streaming kernel's idle
// SMs hand the next kernel part of its weight through L2?
//
// The MLP block at 16 rows runs the gate+up pair on 112 of an H200's 132
// SMs (a block per 64 columns, one block an SM), reading its 117 MB at about
// 3.6 TB/s, below the 4.2 TB/s a plain read reaches. Then the down
// projection reads its 58.7 MB. If the 20 idle SMs, during the pair, bring
// the first part of each down block's span into L2 under an evict-last
// policy, while the pair's own lines go in evict-first, the down
// projection reads that part from L2, and the pair plus the down may take
// less than the two reads one after the other.
//
// Per iteration, on 3 rotated copies of both weights (so that nothing is
// in L2 from the iteration before, as in a model):
//   P  132 blocks of 1024 threads, one an SM (a large dynamic shared
//      memory): blocks 0..111 read the 117 MB in contiguous spans, 16-byte
//      loads past L1 (`ld.global.L1::no_allocate.L2::cache_hint`), 4 in
//      flight a thread, under policy PP; blocks 112..131 issue
//      `cp.async.bulk.prefetch.L2` (or a `prefetch.global.L2::evict_last` a
//      line) of the first FRACTION of each of D's 128 spans, under policy
//      QP, and exit;
//   D  128 blocks reading the 58.7 MB the same way, under policy DP.
// Timed: a CUDA graph of 30 iterations, replayed 10 times; µs per
// iteration, the best of 3 rounds. References: P alone, D alone.
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/l2_handoff bench/gemv_probe/l2_handoff.cu
//   /tmp/l2_handoff
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../floor/stream_kernels.cuh"  // CHECK

enum Policy { NORMAL = 0, EVICT_FIRST = 1, EVICT_LAST = 2, EVICT_UNCHANGED = 3 };

__device__ inline unsigned long long policy_of(int p) {
  unsigned long long policy;
  switch (p) {
    case EVICT_FIRST:
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
      break;
    case EVICT_LAST:
      asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(policy));
      break;
    case EVICT_UNCHANGED:
      asm volatile("createpolicy.fractional.L2::evict_unchanged.b64 %0, 1.0;" : "=l"(policy));
      break;
    default:
      asm volatile("createpolicy.fractional.L2::evict_normal.b64 %0, 1.0;" : "=l"(policy));
  }
  return policy;
}

__device__ inline int4 load(const int4 *p, unsigned long long policy) {
  int4 v;
  asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.s32 {%0, %1, %2, %3}, [%4], %5;"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "l"(p), "l"(policy));
  return v;
}

constexpr int UNROLL = 4;

__host__ __device__ inline size_t smaller(size_t a, size_t b) { return a < b ? a : b; }

// Block `b` of `readers` reads span b of `bytes` split in `readers` spans.
__device__ unsigned read_span(const int4 *src, size_t bytes, int b, int readers, int p) {
  unsigned long long policy = policy_of(p);
  size_t vectors = bytes / 16, per = (vectors + readers - 1) / readers;
  size_t begin = size_t(b) * per, end = smaller(vectors, begin + per);
  unsigned acc = 0;
  size_t i = begin + threadIdx.x;
  for (; i + (UNROLL - 1) * blockDim.x < end; i += UNROLL * blockDim.x) {
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = load(src + i + u * blockDim.x, policy);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < end; i += blockDim.x) {
    int4 v = load(src + i, policy);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  return acc;
}

struct Handoff {
  const int4 *next;      // D's weight
  size_t next_bytes;     // its bytes
  int next_readers;      // D's blocks (its spans)
  float fraction;        // of each span to prefetch
  int mode;              // 0: bulk prefetch, 1: a prefetch instruction a line
  int policy;            // the prefetch's policy (bulk) / NORMAL or EVICT_LAST (lines)
};

// P: blocks below `readers` read; the others prefetch D's spans' heads.
__global__ void first(const int4 *src, size_t bytes, int readers, int p, Handoff h, unsigned *sink) {
  // One block an SM: the launch asks for more dynamic shared memory than
  // two blocks would fit.
  int b = blockIdx.x;
  if (b < readers) {
    unsigned acc = read_span(src, bytes, b, readers, p);
    if (acc == 0x12345678u) sink[b] = acc;
    return;
  }
  if (h.fraction <= 0.f) return;
  int helpers = gridDim.x - readers, me = b - readers;
  size_t per = (h.next_bytes / 16 + h.next_readers - 1) / h.next_readers * 16;
  size_t head = size_t(double(per) * h.fraction) / 128 * 128;
  const char *base = reinterpret_cast<const char *>(h.next);
  if (h.mode == 0) {
    // 32 KB bulk prefetches, dealt round the helpers' threads.
    constexpr size_t CHUNK = 32 << 10;
    size_t chunks_per_span = (head + CHUNK - 1) / CHUNK;
    size_t total = chunks_per_span * h.next_readers;
    unsigned long long policy = policy_of(h.policy);
    for (size_t c = size_t(me) * blockDim.x + threadIdx.x; c < total; c += size_t(helpers) * blockDim.x) {
      size_t span = c / chunks_per_span, at = (c % chunks_per_span) * CHUNK;
      size_t size = smaller(CHUNK, head - at);
      const char *addr = base + span * per + at;
      if (span * per + at + size > h.next_bytes) continue;
      asm volatile("cp.async.bulk.prefetch.L2.global.L2::cache_hint [%0], %1, %2;" ::"l"(addr),
                   "r"(unsigned(size)), "l"(policy)
                   : "memory");
    }
  } else {
    size_t lines_per_span = head / 128, total = lines_per_span * h.next_readers;
    for (size_t c = size_t(me) * blockDim.x + threadIdx.x; c < total; c += size_t(helpers) * blockDim.x) {
      size_t span = c / lines_per_span, at = (c % lines_per_span) * 128;
      const char *addr = base + span * per + at;
      if (h.policy == EVICT_LAST)
        asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(addr));
      else
        asm volatile("prefetch.global.L2 [%0];" ::"l"(addr));
    }
  }
}

__global__ void second(const int4 *src, size_t bytes, int p, unsigned *sink) {
  unsigned acc = read_span(src, bytes, blockIdx.x, gridDim.x, p);
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

struct Variant {
  const char *name;
  bool p, d;        // which kernels run
  int pp, dp;       // their loads' policies
  float fraction;   // of D's spans prefetched by P's helpers
  int mode, qp;     // the prefetch's kind and policy
  size_t persist;   // the context's persisting-L2 limit (bytes; 0: leave it)
};

int main() {
  const size_t P_BYTES = 2ull * 4096 * 7168 * 2, D_BYTES = 4096ull * 7168 * 2;
  const int COPIES = 3, P_READERS = 112, D_READERS = 128, ITER = 30;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("%s: %d SMs, L2 %d MB, persisting max %zu MB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20, size_t(prop.persistingL2CacheMaxSize) >> 20);
  std::vector<int4 *> pw(COPIES), dw(COPIES);
  for (int c = 0; c < COPIES; ++c) {
    CHECK(cudaMalloc(&pw[c], P_BYTES));
    CHECK(cudaMalloc(&dw[c], D_BYTES));
    CHECK(cudaMemset(pw[c], c + 1, P_BYTES));
    CHECK(cudaMemset(dw[c], c + 7, D_BYTES));
  }
  unsigned *sink;
  CHECK(cudaMalloc(&sink, 4096 * 4));
  const int PIN = 120 << 10;
  CHECK(cudaFuncSetAttribute(first, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(second, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  const int grid = prop.multiProcessorCount;

  std::vector<Variant> variants = {
      {"P alone (normal)", true, false, NORMAL, NORMAL, 0, 0, NORMAL, 0},
      {"P alone (evict-first)", true, false, EVICT_FIRST, NORMAL, 0, 0, NORMAL, 0},
      {"D alone (normal)", false, true, NORMAL, NORMAL, 0, 0, NORMAL, 0},
      {"D alone (evict-first)", false, true, NORMAL, EVICT_FIRST, 0, 0, NORMAL, 0},
      {"P then D (normal)", true, true, NORMAL, NORMAL, 0, 0, NORMAL, 0},
      {"P then D (evict-first both)", true, true, EVICT_FIRST, EVICT_FIRST, 0, 0, NORMAL, 0},
  };
  for (float f : {0.1f, 0.2f, 0.3f, 0.4f, 0.5f}) {
    char *n1 = new char[96], *n2 = new char[96], *n3 = new char[96], *n4 = new char[96];
    std::snprintf(n1, 96, "P(ef)+bulk evict-last %.0f%% then D(ef)", 100 * f);
    std::snprintf(n2, 96, "P(ef)+bulk evict-last %.0f%% then D(ef), persist 30MB", 100 * f);
    std::snprintf(n3, 96, "P(ef)+bulk normal %.0f%% then D(ef)", 100 * f);
    std::snprintf(n4, 96, "P(normal)+lines evict-last %.0f%% then D(normal)", 100 * f);
    variants.push_back({n1, true, true, EVICT_FIRST, EVICT_FIRST, f, 0, EVICT_LAST, 0});
    variants.push_back({n2, true, true, EVICT_FIRST, EVICT_FIRST, f, 0, EVICT_LAST, 30ull << 20});
    variants.push_back({n3, true, true, EVICT_FIRST, EVICT_FIRST, f, 0, NORMAL, 0});
    variants.push_back({n4, true, true, NORMAL, NORMAL, f, 1, EVICT_LAST, 0});
  }

  for (int round = 0; round < 3; ++round) {
    for (auto &v : variants) {
      if (v.persist && cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, v.persist) != cudaSuccess) {
        std::printf("round %d  %-58s skipped: %s\n", round + 1, v.name,
                    cudaGetErrorString(cudaGetLastError()));
        continue;
      }
      const int REPLAYS = 10;
      float ms = graph_replays_ms(s, 1, REPLAYS, [&] {
        for (int i = 0; i < ITER; ++i) {
          int c = i % COPIES;
          Handoff h{dw[c], D_BYTES, D_READERS, v.fraction, v.mode, v.qp};
          if (v.p) first<<<v.fraction > 0 ? grid : P_READERS, 1024, PIN, s>>>(pw[c], P_BYTES, P_READERS, v.pp, h, sink);
          if (v.d) second<<<D_READERS, 1024, PIN, s>>>(dw[c], D_BYTES, v.dp, sink);
        }
      });
      double us = ms * 1000.0 / (REPLAYS * ITER);
      double bytes = (v.p ? P_BYTES : 0) + (v.d ? D_BYTES : 0);
      std::printf("round %d  %-58s %6.1f us  (%.2f TB/s of the bytes read)\n", round + 1, v.name, us,
                  bytes / us / 1e6);
      if (v.persist) {
        cudaCtxResetPersistingL2Cache();
        cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
        cudaGetLastError();
      }
    }
  }
  return 0;
}
