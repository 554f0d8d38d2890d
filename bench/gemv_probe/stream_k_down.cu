// Probe (issue 32, session 43): is the 16-row wgmma GEMV's 2-4% miss
// against cuBLAS on the Llama-3-8B down projection (a TP-2 rank: K = 7168 as
// two split-K slices into f32, N = 4096) its tail? The compiler's kernel runs
// 128 blocks (64 column bands x 2 slices), one a tile, on 132 SMs: 4 SMs idle,
// and the call lasts as long as its slowest block.
//
// `streamk_down` is the compiler's kernel (the same ring: 128 weight rows a
// stage, TMA boxes with 128-byte swizzle, one consumer warpgroup of
// m64n16k16 `wgmma`s, one producer warp) with the work cut stream-K fashion:
// the (tile, stage) iterations, tile-major, are split evenly over `ctas`
// blocks. With ctas = 128 each block takes one whole tile (the compiler's
// kernel). Otherwise a tile split between blocks is finished by the block
// that holds its first stage (at the end of its range): the others (at the
// start of theirs) leave f32 partials and count in, and it sums them in a
// fixed order (deterministic) and resets the count.
//
// Timed beside cublasGemmStridedBatchedEx (the runtime's call) in CUDA graphs
// of 20 calls, three weight copies rotated past L2; checked against it. With
// --timeline, one launch per variant records each block's start and end
// (%globaltimer) and prints their spread.
//
//   nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a \
//       -o /tmp/stream_k_down bench/gemv_probe/stream_k_down.cu -lcuda -lcublas
//   /tmp/stream_k_down [--timeline]
#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                   \
  do {                                                                          \
    auto e_ = (x);                                                              \
    if ((int)e_ != 0) {                                                         \
      fprintf(stderr, "%s:%d %s failed: %d\n", __FILE__, __LINE__, #x, (int)e_); \
      exit(1);                                                                  \
    }                                                                           \
  } while (0)

#include "mbarrier.cuh"
#include "tma_2d.cuh"
__device__ __forceinline__ uint64_t desc(uint32_t addr) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(1024 >> 4) << 16) | ((uint64_t)(1024 >> 4) << 32) |
         ((uint64_t)1 << 62);
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }
template <int N> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void wgmma_n16(float *d, uint64_t da, uint64_t db) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 1, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(da), "l"(db), "r"(1));
}
__device__ __forceinline__ void fence_regs(float *d) {
#pragma unroll
  for (int i = 0; i < 8; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
__device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ unsigned load_acquire(const unsigned *p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

constexpr int BK = 128;  // weight rows a stage
constexpr int T = 16;    // the call's rows as wgmma's N
constexpr int W_TILE = BK * 128;
constexpr int A_TILE = T * 128;
constexpr int STAGE = W_TILE + (BK / 64) * A_TILE;
constexpr int MAX_PARTS = 4;  // blocks a tile may be split over, less the one that finishes it

// The block that holds iteration x of `total` split over `n` blocks
// (block c holds [c total / n, (c + 1) total / n)).
__device__ __forceinline__ int block_of(long x, long total, int n) {
  return (int)(((x + 1) * n + total - 1) / total) - 1;
}

template <int STAGES>
__global__ void __launch_bounds__(160, 1)
    streamk_down(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap amap, float *out,
                 int M, int K, int N, int S, float *parts, unsigned *cnt, unsigned long long *times, int order, int hint) {
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char *base =
      reinterpret_cast<unsigned char *>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ uint64_t full[STAGES], empty[STAGES];
  if (times && threadIdx.x == 0) times[2 * blockIdx.x] = globaltimer();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int bands = N / 64, tiles = bands * S, ipt = K / S / BK;
  const long total = (long)tiles * ipt;
  const int n = gridDim.x, c = blockIdx.x;
  const long begin = total * c / n, end = total * (c + 1) / n;
  // Tile t's slice and band: slice-major (order 0) or band-major (1).
  auto slice_of = [&](int t) { return order == 0 ? t / bands : t % S; };
  auto band_of = [&](int t) { return order == 0 ? t % bands : t / S; };
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (warp == 4) {
    if (lane == 0) {
      uint64_t policy;
      asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
      for (long it = begin; it < end; ++it) {
        const int i = (int)(it - begin), s = i % STAGES;
        if (i >= STAGES) mbar_wait(&empty[s], ((i / STAGES) - 1) & 1);
        const uint32_t st = smem(base + s * STAGE);
        const int t = (int)(it / ipt), k = (int)(it % ipt);
        const int k0 = slice_of(t) * (K / S) + k * BK;
        mbar_expect_tx(&full[s], STAGE);
        tma_2d(st, &wmap, band_of(t) * 64, k0, &full[s], policy, hint != 0);
        for (int b = 0; b < BK / 64; ++b) tma_2d(st + W_TILE + b * A_TILE, &amap, k0 + 64 * b, 0, &full[s], 0, false);
      }
    }
  } else {
    float acc[8];
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[j] = 0.f;
    long it = begin;
    while (it < end) {
      // The block's part of tile t: its stages, then its sums.
      const int t = (int)(it / ipt);
      const long part_end = end < (long)(t + 1) * ipt ? end : (long)(t + 1) * ipt;
      for (; it < part_end; ++it) {
        const int i = (int)(it - begin), s = i % STAGES;
        mbar_wait(&full[s], (i / STAGES) & 1);
        const uint32_t st = smem(base + s * STAGE);
        wg_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; ++kk)
          wgmma_n16(acc, desc(st + kk * 2048), desc(st + W_TILE + (kk / 4) * A_TILE + (kk % 4) * 32));
        wg_commit();
        fence_regs(acc);
        wg_wait<1>();
        if (i > 0 && lane == 0) mbar_arrive(&empty[(i - 1) % STAGES]);
      }
      wg_wait<0>();
      fence_regs(acc);
      const long first = (long)t * ipt;
      const bool head = first >= begin, whole = head && first + ipt <= end;
      const int wl = warp & 3;
      float *tile_out = out + (size_t)slice_of(t) * M * N + band_of(t) * 64;
      if (head && !whole) {
        // Finish the tile: the later blocks' partials, in their order.
        const int others = block_of(first + ipt - 1, total, n) - c;
        if (threadIdx.x == 0)
          while (load_acquire(cnt + t) < (unsigned)others) {
          }
        asm volatile("bar.sync 1, 128;" ::: "memory");
        for (int p = 0; p < others; ++p) {
          const float *part = parts + ((size_t)t * MAX_PARTS + p) * T * 64;
#pragma unroll
          for (int j = 0; j < 8; ++j) {
            const int col = 16 * wl + (lane >> 2) + ((j >> 1) & 1) * 8;
            const int m = 8 * (j >> 2) + 2 * (lane & 3) + (j & 1);
            acc[j] += __ldcg(part + m * 64 + col);
          }
        }
        asm volatile("bar.sync 1, 128;" ::: "memory");
        if (threadIdx.x == 0) cnt[t] = 0;
      }
      if (head) {
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int col = 16 * wl + (lane >> 2) + ((j >> 1) & 1) * 8;
          const int m = 8 * (j >> 2) + 2 * (lane & 3) + (j & 1);
          if (m < M) tile_out[(size_t)m * N + col] = acc[j];
        }
      } else {
        const int p = c - block_of(first, total, n) - 1;
        float *part = parts + ((size_t)t * MAX_PARTS + p) * T * 64;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const int col = 16 * wl + (lane >> 2) + ((j >> 1) & 1) * 8;
          const int m = 8 * (j >> 2) + 2 * (lane & 3) + (j & 1);
          __stcg(part + m * 64 + col, acc[j]);
        }
        __threadfence();
        asm volatile("bar.sync 1, 128;" ::: "memory");
        if (threadIdx.x == 0) atomicAdd(cnt + t, 1u);
      }
#pragma unroll
      for (int j = 0; j < 8; ++j) acc[j] = 0.f;
    }
  }
  if (times) {
    __syncthreads();
    if (threadIdx.x == 0) times[2 * blockIdx.x + 1] = globaltimer();
  }
}

static CUtensorMap map_of(const void *ptr, int rows, int cols, int box_rows,
                          CUtensorMapL2promotion promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_256B) {
  CUtensorMap m;
  cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
  cuuint64_t strides[1] = {(cuuint64_t)cols * 2};
  cuuint32_t box[2] = {64, (cuuint32_t)box_rows};
  cuuint32_t elem[2] = {1, 1};
  CK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(ptr), dims, strides, box,
                            elem, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            promotion, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
  return m;
}

#include "fill.cuh"

static cudaStream_t stream;

#include "graph_time.cuh"

// Minimum and median over `rounds` replays of a graph of `reps` calls, µs per call.
static std::pair<float, float> time_graph(const std::function<void(int)> &call, int reps = 20, int rounds = 7) {
  return graph_times(stream, call, reps, rounds);
}

// promotion: the weight's L2 promotion (0 none, 1 64 B, 2 128 B, 3 256 B);
// hint: its copies evict-first.
struct Variant {
  int stages, ctas, order, promotion = 3, hint = 1;
};

int main(int argc, char **argv) {
  const bool timeline = argc > 1 && !strcmp(argv[1], "--timeline");
  const int K = getenv("PROBE_K") ? atoi(getenv("PROBE_K")) : 7168;
  const int N = getenv("PROBE_N") ? atoi(getenv("PROBE_N")) : 4096;
  const int S = 2, COPIES = 3;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, %d SMs; down projection K = %d (%d slices), N = %d\n", prop.name, prop.multiProcessorCount, K, S, N);
  if (K % (S * BK) || N % 64) {
    fprintf(stderr, "K must be a multiple of %d and N of 64\n", S * BK);
    return 1;
  }
  cublasHandle_t blas;
  CK(cublasCreate(&blas));
  CK(cublasSetStream(blas, stream));
  __nv_bfloat16 *w[COPIES], *a;
  for (int i = 0; i < COPIES; ++i) {
    CK(cudaMalloc(&w[i], (size_t)K * N * 2));
    fill<<<1024, 256>>>(w[i], (size_t)K * N, 17 + i, 0.1f);
  }
  CK(cudaMalloc(&a, (size_t)T * K * 2));
  fill<<<64, 256>>>(a, (size_t)T * K, 5, 2.f);
  float *ref, *got, *parts;
  unsigned *cnt;
  unsigned long long *times;
  const int tiles = N / 64 * S;
  CK(cudaMalloc(&ref, (size_t)S * T * N * 4));
  CK(cudaMalloc(&got, (size_t)S * T * N * 4));
  CK(cudaMalloc(&parts, (size_t)tiles * MAX_PARTS * T * 64 * 4));
  CK(cudaMalloc(&cnt, tiles * 4));
  CK(cudaMemset(cnt, 0, tiles * 4));
  CK(cudaMalloc(&times, 2 * 1024 * 8));
  CK(cudaDeviceSynchronize());
  const double bytes = (double)K * N * 2;
  const int max_smem = 8 * STAGE + 1024;
  CK(cudaFuncSetAttribute(streamk_down<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  CK(cudaFuncSetAttribute(streamk_down<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  CK(cudaFuncSetAttribute(streamk_down<6>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  CK(cudaFuncSetAttribute(streamk_down<8>, cudaFuncAttributeMaxDynamicSharedMemorySize, max_smem));
  const int sms = prop.multiProcessorCount;
  std::vector<Variant> variants = {
      {8, tiles, 0},       {8, tiles, 0, 0},    {8, tiles, 0, 2}, {8, tiles, 0, 3, 0}, {8, tiles, 0, 0, 0},
      {4, tiles, 0},       {6, tiles, 0},       {8, sms, 0},      {8, sms, 1},         {6, sms, 0},
      {4, 2 * tiles, 0},   {4, 2 * sms, 0},     {3, 3 * sms, 0}};
  // PROBE_ROWS=16: that row count alone; PROBE_VARIANTS=n: our first n
  // variants only (0: cuBLAS alone), as ncu runs want.
  std::vector<int> row_counts = {1, 2, 16};
  if (getenv("PROBE_ROWS")) row_counts = {atoi(getenv("PROBE_ROWS"))};
  if (getenv("PROBE_VARIANTS")) variants.resize(std::min<size_t>(variants.size(), atoi(getenv("PROBE_VARIANTS"))));
  for (int M : row_counts) {
    const float alpha = 1.f, beta = 0.f;
    const int ks = K / S;
    auto blas_call = [&](int i, float *o) {
      CK(cublasGemmStridedBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, M, ks, &alpha, w[i % COPIES], CUDA_R_16BF, N,
                                    (long long)ks * N, a, CUDA_R_16BF, K, ks, &beta, o, CUDA_R_32F, N,
                                    (long long)M * N, S, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    };
    CUtensorMap wm[4][COPIES];
    const CUtensorMapL2promotion promotions[4] = {CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
                                                  CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                                                  CU_TENSOR_MAP_L2_PROMOTION_L2_256B};
    for (int p = 0; p < 4; ++p)
      for (int i = 0; i < COPIES; ++i) wm[p][i] = map_of(w[i], K, N, BK, promotions[p]);
    const CUtensorMap am = map_of(a, M, K, T);
    auto ours = [&](const Variant &v, int i, float *o, unsigned long long *tm) {
      const int smem_bytes = v.stages * STAGE + 1024;
      cudaLaunchConfig_t config = {};
      config.gridDim = dim3(v.ctas);
      config.blockDim = dim3(160);
      config.dynamicSmemBytes = smem_bytes;
      config.stream = stream;
      void (*f)(CUtensorMap, CUtensorMap, float *, int, int, int, int, float *, unsigned *, unsigned long long *,
                int, int) = nullptr;
      switch (v.stages) {
        case 3: f = streamk_down<3>; break;
        case 4: f = streamk_down<4>; break;
        case 6: f = streamk_down<6>; break;
        default: f = streamk_down<8>; break;
      }
      CK(cudaLaunchKernelEx(&config, f, wm[v.promotion][i % COPIES], am, o, M, K, N, S, parts, cnt, tm, v.order,
                              v.hint));
    };
    // cuBLAS, the reference of the checks.
    blas_call(0, ref);
    CK(cudaStreamSynchronize(stream));
    auto tb = time_graph([&](int i) { blas_call(i, got); });
    printf("M=%2d cuBLAS ex default        : %6.2f us min, %6.2f median (%.2f TB/s)\n", M, tb.first, tb.second,
           bytes / tb.first / 1e6);
    for (const Variant &v : variants) {
      // A split tile needs at most MAX_PARTS later blocks.
      const long total = (long)tiles * (K / S / BK);
      if ((K / S / BK) / std::max(1L, total / v.ctas) + 2 > MAX_PARTS + 1) continue;
      CK(cudaMemset(got, 0, (size_t)S * T * N * 4));
      ours(v, 0, got, nullptr);
      CK(cudaStreamSynchronize(stream));
      std::vector<float> hr((size_t)S * M * N), hg((size_t)S * M * N);
      CK(cudaMemcpy(hr.data(), ref, hr.size() * 4, cudaMemcpyDeviceToHost));
      CK(cudaMemcpy(hg.data(), got, hg.size() * 4, cudaMemcpyDeviceToHost));
      double scale = 0, diff = 0;
      for (size_t e = 0; e < hr.size(); ++e) {
        scale = std::max(scale, (double)std::fabs(hr[e]));
        diff = std::max(diff, (double)std::fabs(hr[e] - hg[e]));
      }
      const bool ok = diff <= 1e-3 * scale;
      auto t = time_graph([&](int i) { ours(v, i, got, nullptr); });
      printf("M=%2d ours stages=%d ctas=%3d order=%d promo=%d hint=%d: %6.2f us min, %6.2f median (%.2f TB/s)  %s (rel diff %.1e)\n", M,
             v.stages, v.ctas, v.order, v.promotion, v.hint, t.first, t.second, bytes / t.first / 1e6, ok ? "PASS" : "FAIL",
             diff / std::max(scale, 1e-30));
      if (timeline && M == 16) {
        ours(v, 1, got, nullptr);  // another copy before, so the timed one reads its weight cold
        ours(v, 2, got, times);
        CK(cudaStreamSynchronize(stream));
        std::vector<unsigned long long> h(2 * v.ctas);
        CK(cudaMemcpy(h.data(), times, h.size() * 8, cudaMemcpyDeviceToHost));
        unsigned long long t0 = ~0ull;
        for (int b = 0; b < v.ctas; ++b) t0 = std::min(t0, h[2 * b]);
        std::vector<double> starts, ends;
        for (int b = 0; b < v.ctas; ++b) starts.push_back((h[2 * b] - t0) / 1e3), ends.push_back((h[2 * b + 1] - t0) / 1e3);
        std::sort(starts.begin(), starts.end());
        std::sort(ends.begin(), ends.end());
        auto q = [](const std::vector<double> &x, double f) { return x[(size_t)(f * (x.size() - 1))]; };
        printf("     timeline: starts %.2f..%.2f us, ends min %.2f p10 %.2f p50 %.2f p90 %.2f max %.2f\n", starts.front(),
               starts.back(), ends.front(), q(ends, 0.1), q(ends, 0.5), q(ends, 0.9), ends.back());
      }
    }
  }
  printf("done\n");
  return 0;
}
