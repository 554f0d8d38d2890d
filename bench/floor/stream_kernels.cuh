// The streaming-read kernels that bench/floor/stream_read.cu sweeps for
// the floor and bench/gemv_probe/l2_state.cu reuses (CUDA C++, anchors
// beside ours, not part of the compiler):
//   ldg    16-byte vector loads into registers (`Load`: __ldcs for the
//          floor, ld.global.L1::no_allocate as the generated GEMVs load),
//          UNROLL loads in flight per thread, grid-stride over the bytes,
//          optionally after prefetching the lines of the thread's first
//          `prefetch` strides into L2;
//   bulk   cp.async.bulk copies of `chunk` bytes into a ring of `depth`
//          shared-memory stages, each completing on its own mbarrier (the
//          TMA's path), optionally under an L2 evict-first policy.
// Every kernel folds what it read into one word per block, so nothing is
// skipped. The GEMV probes of bench/gemv_probe also take from here their
// error check, the generated GEMVs' load and staging of the rows of `a`
// (`stage_rows`), and their timing of a CUDA graph (`graph_replays_ms`).
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                  \
  do {                                                                            \
    cudaError_t e = (x);                                                          \
    if (e != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,              \
                   cudaGetErrorString(e));                                        \
      std::exit(1);                                                               \
    }                                                                             \
  } while (0)

// The floor's load: cache-streaming.
struct StreamingLoad {
  __device__ int4 operator()(const int4 *p) const { return __ldcs(p); }
};

// The generated GEMVs' load: past L1.
struct NoAllocateLoad {
  __device__ int4 operator()(const int4 *p) const {
    int4 v;
    asm volatile("ld.global.L1::no_allocate.v4.s32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
  }
};

// PREFETCH: the lines of the thread's first `prefetch` strides go to L2
// first (compiled out of the floor's kernels).
template <int UNROLL, class Load, bool PREFETCH = false>
__global__ void ldg(const int4 *__restrict__ src, size_t vectors, int prefetch, unsigned *sink) {
  Load load;
  size_t stride = size_t(gridDim.x) * blockDim.x;
  size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
  // One prefetch per 128-byte line: the thread whose vector starts it.
  if (PREFETCH)
    for (int p = 0; p < prefetch; ++p) {
      size_t v = i + size_t(p) * stride;
      if (v < vectors && v % 8 == 0) asm volatile("prefetch.global.L2 [%0];" ::"l"(src + v));
    }
  unsigned acc = 0;
  for (; i + (UNROLL - 1) * stride < vectors; i += UNROLL * stride) {
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = load(src + i + u * stride);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < vectors; i += stride) {
    int4 v = load(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

__device__ inline unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

// Each block reads a contiguous span of `per_block` bytes in chunks of
// `chunk` bytes, `depth` chunks in flight, one mbarrier per stage; with
// EVICT_FIRST, under an L2 evict-first policy.
template <bool EVICT_FIRST = false>
__global__ void bulk(const char *__restrict__ src, size_t bytes, size_t per_block, int chunk,
                     int depth, unsigned *sink) {
  extern __shared__ __align__(128) char smem[];
  unsigned long long *bars = reinterpret_cast<unsigned long long *>(smem + size_t(depth) * chunk);
  size_t begin = size_t(blockIdx.x) * per_block;
  size_t end = bytes < begin + per_block ? bytes : begin + per_block;
  if (begin >= end) return;
  size_t chunks = (end - begin + chunk - 1) / chunk;
  if (threadIdx.x == 0) {
    for (int s = 0; s < depth; ++s)
      asm volatile("mbarrier.init.shared.b64 [%0], 1;" ::"r"(smem_addr(bars + s)));
    asm volatile("fence.mbarrier_init.release.cluster;");
  }
  __syncthreads();
  auto issue = [&](size_t c) {
    int s = c % depth;
    size_t at = begin + c * chunk;
    unsigned size = unsigned(end - at < size_t(chunk) ? end - at : size_t(chunk));
    asm volatile("mbarrier.arrive.expect_tx.shared.b64 _, [%0], %1;" ::"r"(smem_addr(bars + s)),
                 "r"(size));
    if (EVICT_FIRST) {
      unsigned long long policy;
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
          " [%0], [%1], %2, [%3], %4;" ::"r"(smem_addr(smem + size_t(s) * chunk)),
          "l"(src + at), "r"(size), "r"(smem_addr(bars + s)), "l"(policy)
          : "memory");
    } else {
      asm volatile(
          "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::
              "r"(smem_addr(smem + size_t(s) * chunk)),
          "l"(src + at), "r"(size), "r"(smem_addr(bars + s))
          : "memory");
    }
  };
  unsigned acc = 0;
  if (threadIdx.x == 0)
    for (size_t c = 0; c < size_t(depth) && c < chunks; ++c) issue(c);
  for (size_t c = 0; c < chunks; ++c) {
    int s = c % depth;
    unsigned parity = (c / depth) & 1;
    asm volatile(
        "{\n .reg .pred p;\n waitLoop:\n"
        " mbarrier.try_wait.parity.shared.b64 p, [%0], %1;\n"
        " @!p bra waitLoop;\n}" ::"r"(smem_addr(bars + s)),
        "r"(parity));
    acc ^= reinterpret_cast<const unsigned *>(smem + size_t(s) * chunk)[threadIdx.x % (chunk / 4)];
    __syncthreads();
    if (threadIdx.x == 0 && c + depth < chunks) issue(c + depth);
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}


// The block's threads copy `rows` rows of `row_vectors` 16-byte vectors
// (rows `lda_vectors` vectors apart from `src` in global memory) into
// shared `dst`, rows `pitch` bytes apart: each thread loads 7 vectors
// before it stores them, as the generated GEMVs stage the rows of `a`.
// No barrier.
__device__ inline void stage_rows(char *dst, const int4 *src, int rows, int row_vectors,
                                  size_t lda_vectors, size_t pitch) {
  int vectors = rows * row_vectors;
  constexpr int BATCH = 7;
  for (int v0 = threadIdx.x; v0 < vectors; v0 += BATCH * blockDim.x) {
    int4 held[BATCH];
#pragma unroll
    for (int b = 0; b < BATCH; ++b) {
      int v = v0 + b * blockDim.x;
      held[b] = v < vectors ? src[size_t(v / row_vectors) * lda_vectors + v % row_vectors] : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int b = 0; b < BATCH; ++b) {
      int v = v0 + b * blockDim.x;
      if (v < vectors) *reinterpret_cast<int4 *>(dst + (v / row_vectors) * pitch + (v % row_vectors) * 16) = held[b];
    }
  }
}

// The probes' timing of a CUDA graph: `capture` launches work on `s`, which
// is captured into one graph, replayed once, then replayed `replays` times
// in each of `rounds` rounds between two events. Returns the fastest
// round's ms (the caller divides by its calls); frees the graph and events.
template <class Capture>
float graph_replays_ms(cudaStream_t s, int rounds, int replays, Capture capture) {
  cudaGraph_t g;
  cudaGraphExec_t ge;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  capture();
  CHECK(cudaStreamEndCapture(s, &g));
  CHECK(cudaGraphInstantiate(&ge, g, 0));
  CHECK(cudaGraphLaunch(ge, s));
  CHECK(cudaStreamSynchronize(s));
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  float best = 1e30f;
  for (int round = 0; round < rounds; ++round) {
    CHECK(cudaEventRecord(a, s));
    for (int r = 0; r < replays; ++r) CHECK(cudaGraphLaunch(ge, s));
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    best = ms < best ? ms : best;
  }
  CHECK(cudaEventDestroy(a));
  CHECK(cudaEventDestroy(b));
  CHECK(cudaGraphExecDestroy(ge));
  CHECK(cudaGraphDestroy(g));
  return best;
}
