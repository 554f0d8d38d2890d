// Probe (not shipped): does prefetching the head of the next GEMM's weight
// into L2, from the latency-bound element-wise kernel in front of it, make
// the Llama-3-8B TP MLP block faster at decode sizes? One GPU, the same
// kernel sequence as the compiled llama_mlp minus the all-reduce:
//   RMSNorm (a block per row) -> gate+up (one batched cuBLAS GEMM)
//   -> SiLU(gate) * up -> down (cuBLAS GEMM)
// timed in a CUDA graph of 20 layers. The RMSNorm kernel may prefetch the
// head of each of the gate and up weights, the SiLU kernel the down
// weight (in `segments` pieces spread over its rows, for split-K GEMMs),
// with extra blocks that only prefetch.
#include "probe_timing.h"

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

constexpr int D = 4096, F = 7168, THREADS = 256;

struct Prefetch {
  const char* base;   // first byte of the region
  size_t stride;      // bytes between segments
  size_t bytes;       // bytes per segment
  int segments;       // 0: none
  int blocks;         // blocks that take part
  int mode;           // 1: cp.async.bulk.prefetch.L2, 2: prefetch.global.L2, 3: ..::evict_last
};

__device__ void prefetch(const Prefetch& p) {
  if (p.segments == 0 || blockIdx.x >= p.blocks) return;
  size_t thread = blockIdx.x * (size_t)blockDim.x + threadIdx.x, threads = (size_t)p.blocks * blockDim.x;
  size_t chunk = p.mode == 1 ? 16384 : 128;
  size_t per_segment = p.bytes / chunk, total = per_segment * p.segments;
  for (size_t i = thread; i < total; i += threads) {
    const char* at = p.base + (i / per_segment) * p.stride + (i % per_segment) * chunk;
    if (p.mode == 1)
      asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(at), "r"((unsigned)chunk) : "memory");
    else if (p.mode == 2)
      asm volatile("prefetch.global.L2 [%0];" ::"l"(at));
    else
      asm volatile("prefetch.global.L2::evict_last [%0];" ::"l"(at));
  }
}

__global__ void rmsnorm(const __nv_bfloat16* x, const __nv_bfloat16* w, __nv_bfloat16* y, int rows, Prefetch p) {
  prefetch(p);
  if (blockIdx.x >= rows) return;
  const uint4* xr = reinterpret_cast<const uint4*>(x + (size_t)blockIdx.x * D);
  uint4 v[D / 8 / THREADS];
  float s = 0;
#pragma unroll
  for (int i = 0; i < D / 8 / THREADS; i++) {
    v[i] = xr[threadIdx.x + i * THREADS];
    const __nv_bfloat16* e = reinterpret_cast<const __nv_bfloat16*>(&v[i]);
#pragma unroll
    for (int j = 0; j < 8; j++) { float f = __bfloat162float(e[j]); s += f * f; }
  }
  __shared__ float part[THREADS / 32];
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
  __syncthreads();
  s = 0;
  for (int i = 0; i < THREADS / 32; i++) s += part[i];
  float inv = rsqrtf(s / D + 1e-5f);
  const uint4* wr = reinterpret_cast<const uint4*>(w);
  uint4* yr = reinterpret_cast<uint4*>(y + (size_t)blockIdx.x * D);
#pragma unroll
  for (int i = 0; i < D / 8 / THREADS; i++) {
    uint4 wv = wr[threadIdx.x + i * THREADS], o;
    const __nv_bfloat16 *e = reinterpret_cast<const __nv_bfloat16*>(&v[i]), *we = reinterpret_cast<const __nv_bfloat16*>(&wv);
    __nv_bfloat16* oe = reinterpret_cast<__nv_bfloat16*>(&o);
#pragma unroll
    for (int j = 0; j < 8; j++) oe[j] = __float2bfloat16(__bfloat162float(e[j]) * inv * __bfloat162float(we[j]));
    yr[threadIdx.x + i * THREADS] = o;
  }
}

__global__ void silu_mul(const __nv_bfloat16* gate, const __nv_bfloat16* up, __nv_bfloat16* act, size_t vectors, Prefetch p) {
  prefetch(p);
  size_t i = blockIdx.x * (size_t)THREADS + threadIdx.x;
  if (i >= vectors) return;
  uint4 g = reinterpret_cast<const uint4*>(gate)[i], u = reinterpret_cast<const uint4*>(up)[i], o;
  const __nv_bfloat16 *ge = reinterpret_cast<const __nv_bfloat16*>(&g), *ue = reinterpret_cast<const __nv_bfloat16*>(&u);
  __nv_bfloat16* oe = reinterpret_cast<__nv_bfloat16*>(&o);
#pragma unroll
  for (int j = 0; j < 8; j++) {
    float a = __bfloat162float(ge[j]);
    oe[j] = __float2bfloat16(a / (1.f + __expf(-a)) * __bfloat162float(ue[j]));
  }
  reinterpret_cast<uint4*>(act)[i] = o;
}

__global__ void prefetch_only(Prefetch p) { prefetch(p); }

int main() {
  cublasHandle_t blas; cublasCreate(&blas);
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cublasSetStream(blas, s);
  const int MAXM = 128;
  __nv_bfloat16 *x, *nw, *xn, *wgu, *gu, *act, *wd, *out;
  CK(cudaMalloc(&x, MAXM * (size_t)D * 2)); CK(cudaMalloc(&nw, D * 2)); CK(cudaMalloc(&xn, MAXM * (size_t)D * 2));
  CK(cudaMalloc(&wgu, 2 * (size_t)D * F * 2)); CK(cudaMalloc(&gu, 2 * MAXM * (size_t)F * 2));
  CK(cudaMalloc(&act, MAXM * (size_t)F * 2)); CK(cudaMalloc(&wd, (size_t)F * D * 2)); CK(cudaMalloc(&out, MAXM * (size_t)D * 2));
  for (auto [ptr, n] : {std::pair{x, MAXM * (size_t)D}, {nw, (size_t)D}, {wgu, 2 * (size_t)D * F}, {wd, (size_t)F * D}}) {
    std::vector<__nv_bfloat16> h(n);
    for (size_t i = 0; i < n; i++) h[i] = __float2bfloat16((float)((i * 2654435761u) % 1000) / 1000.f - 0.5f);
    CK(cudaMemcpy(ptr, h.data(), n * 2, cudaMemcpyHostToDevice));
  }
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  int l2; CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
  printf("SMs %d, L2 %d MB\n", sms, l2 >> 20);
  const size_t gu_bytes = (size_t)D * F * 2, d_bytes = (size_t)F * D * 2;

  struct Config { int m; size_t gu_mb; int gu_blocks; size_t d_mb; int d_segments; int d_blocks; int mode; bool separate; };
  auto layer = [&](const Config& c) {
    Prefetch pg{(const char*)wgu, gu_bytes, c.gu_mb << 19, c.gu_mb ? 2 : 0, c.gu_blocks, c.mode};  // half from each weight
    Prefetch pd{(const char*)wd, d_bytes / (c.d_segments ? c.d_segments : 1), c.d_segments ? (c.d_mb << 20) / c.d_segments : 0,
                c.d_mb ? c.d_segments : 0, c.d_blocks, c.mode};
    Prefetch none{nullptr, 0, 0, 0, 0, 0};
    if (c.separate) prefetch_only<<<c.gu_blocks ? c.gu_blocks : 1, THREADS, 0, s>>>(pg);
    rmsnorm<<<std::max(c.m, c.separate ? 0 : pg.segments ? c.gu_blocks : 0), THREADS, 0, s>>>(x, nw, xn, c.m, c.separate ? none : pg);
    float one = 1.f, zero = 0.f;
    cublasGemmStridedBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, F, c.m, D, &one, wgu, CUDA_R_16BF, F, (long long)D * F, xn, CUDA_R_16BF, D, 0,
                               &zero, gu, CUDA_R_16BF, F, (long long)c.m * F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    size_t vectors = (size_t)c.m * F / 8;
    int blocks = (int)((vectors + THREADS - 1) / THREADS);
    if (c.separate && pd.segments) prefetch_only<<<c.d_blocks, THREADS, 0, s>>>(pd);
    silu_mul<<<std::max(blocks, c.separate ? 0 : pd.segments ? c.d_blocks : 0), THREADS, 0, s>>>(gu, gu + (size_t)c.m * F, act, vectors,
                                                                                                 c.separate ? none : pd);
    cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, D, c.m, F, &one, wd, CUDA_R_16BF, D, act, CUDA_R_16BF, F, &zero, out, CUDA_R_16BF, D,
                 CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  };
  auto time_graph = [&](const Config& c) { return graph_us(s, [&] { layer(c); }); };
  // The reference output: no prefetch. Prefetches change no value.
  std::vector<__nv_bfloat16> ref(MAXM * (size_t)D), got(MAXM * (size_t)D);
  for (int m : {1, 16, 128}) {
    Config base{m, 0, 0, 0, 1, 0, 1, false};
    layer(base); CK(cudaStreamSynchronize(s));
    CK(cudaMemcpy(ref.data(), out, m * (size_t)D * 2, cudaMemcpyDeviceToHost));
    std::vector<Config> configs;
    for (int mode : {1, 2, 3})
      for (size_t gu_mb : {0, 8, 16, 24})
        for (int blocks : {16, 66, 132})
          for (size_t d_mb : {0, 8, 16})
            for (int seg : {1, 4})
              if ((gu_mb || d_mb) && !(d_mb == 0 && seg > 1)) configs.push_back({m, gu_mb, blocks, d_mb, seg, blocks, mode, false});
    for (size_t gu_mb : {8, 16}) configs.push_back({m, gu_mb, 66, gu_mb, 1, 66, 1, true});
    float t0 = time_graph(base);
    printf("M=%d base %.2f us\n", m, t0);
    std::vector<std::pair<float, Config>> results;
    for (auto& c : configs) {
      float t = time_graph(c);
      results.push_back({t, c});
      CK(cudaMemcpy(got.data(), out, m * (size_t)D * 2, cudaMemcpyDeviceToHost));
      for (size_t i = 0; i < m * (size_t)D; i++)
        if (*(unsigned short*)&got[i] != *(unsigned short*)&ref[i]) { printf("MISMATCH at %zu\n", i); exit(1); }
      printf("M=%d mode %d gu %2zu MB d %2zu MB seg %d blocks %3d %s: %.2f us (%.3fx base)\n", m, c.mode, c.gu_mb, c.d_mb, c.d_segments,
             c.gu_blocks, c.separate ? "separate" : "fused   ", t, t0 / t);
    }
    printf("M=%d base again %.2f us\n", m, time_graph(base));
    std::sort(results.begin(), results.end(), [](auto& a, auto& b) { return a.first < b.first; });
    for (int i = 0; i < 5; i++) {
      auto& c = results[i].second;
      printf("M=%d BEST %d: mode %d gu %zu d %zu seg %d blocks %d %s %.2f us (%.3fx)\n", m, i, c.mode, c.gu_mb, c.d_mb, c.d_segments,
             c.gu_blocks, c.separate ? "separate" : "fused", results[i].first, t0 / results[i].first);
    }
  }
  return 0;
}
