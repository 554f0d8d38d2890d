// Probe (issue 32): a plain-FMA GEMV for M = 1 (and other tiny M), the
// weight [K, N] row-major bf16 streamed by 16-byte loads straight into
// registers with U loads in flight per thread, the activation row held in
// shared memory as f32. Unlike regmma.cu (mma.sync, `a` read from global per
// step) there are no tensor cores and no loads of `a` in the loop.
//
// pair:  act = SiLU(xn Wg) * (xn Wu), xn = RMSNorm(x) * g computed in the
//        prologue (each block recomputes the row statistic of its 4096
//        inputs after issuing its first weight loads). A block owns CG gate
//        columns and the same CG up columns over all of K; its KG k-groups
//        meet in shared memory and the epilogue writes act.
// down:  S split-K slices of act Wd in f32, as symm-mem-split-k's slices.
//
// Compared in the same process with cuBLAS (strided-batched pair then the
// element-wise kernels; the down projection as S = 2 slices). The weights are
// rotated over 3 copies (> L2), so each read comes from HBM. Times are graph
// replays of 20 calls, µs per call.
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o fma_gemv bench/gemv_probe/fma_gemv.cu -lcublas
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cooperative_groups.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                      \
  do {                                                                                \
    cudaError_t err_ = (x);                                                           \
    if (err_ != cudaSuccess) {                                                        \
      std::printf("%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(err_)); \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

constexpr int D = 4096, F = 7168, COPIES = 3;

// How the weight is loaded: -DLOAD_MODE=0 __ldcs (ld.global.cs), 1 a plain
// load (ld.global), 2 __ldg (ld.global.nc), 3 ld.global.L1::no_allocate.
#ifndef LOAD_MODE
#define LOAD_MODE 0
#endif
__device__ __forceinline__ uint4 LOADW(const uint4 *p) {
#if LOAD_MODE == 0
  return __ldcs(p);
#elif LOAD_MODE == 1
  return *p;
#elif LOAD_MODE == 2
  return __ldg(p);
#else
  uint4 v;
  asm volatile("ld.global.L1::no_allocate.v4.u32 {%0,%1,%2,%3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
#endif
}

__device__ __forceinline__ void unpack(const uint4 &v, float *f) {
  const unsigned w[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    f[2 * i] = __uint_as_float(w[i] << 16);
    f[2 * i + 1] = __uint_as_float(w[i] & 0xffff0000u);
  }
}

// Threads: (2 * CG / 8) column pieces x KG k-groups. Piece p < CG/8 is gate.
template <int M, int CG, int KG, int U>
__global__ void __launch_bounds__((2 * CG / 8) * KG) pair(const __nv_bfloat16 *__restrict__ x,
                                                          const __nv_bfloat16 *__restrict__ g,
                                                          const uint4 *__restrict__ wg,
                                                          const uint4 *__restrict__ wu,
                                                          __nv_bfloat16 *__restrict__ act) {
  constexpr int PIECES = 2 * CG / 8, ROWS = D / KG;
  extern __shared__ float smem[];
  float *xn = smem;                      // [M][D]
  float *red = smem + M * D;             // [KG][M][2*CG]
  __shared__ float stat[M][32];
  const int t = threadIdx.x, piece = t % PIECES, kg = t / PIECES;
  const bool up = piece >= CG / 8;
  const uint4 *w = up ? wu : wg;
  const int col8 = blockIdx.x * (CG / 8) + (up ? piece - CG / 8 : piece);  // 16-byte column
  const int ld = F / 8;
  static_assert(ROWS % U == 0, "rows per thread");
  // Row i of this thread is k = i * KG + kg: a warp's k-groups read
  // neighbouring rows (and neighbouring words of xn).
  // First weight loads before the prologue.
  uint4 buf[U];
#pragma unroll
  for (int u = 0; u < U; ++u) buf[u] = LOADW(w + size_t(u * KG + kg) * ld + col8);
  // RMSNorm prologue.
  const int nt = blockDim.x;
  for (int m = 0; m < M; ++m) {
    float s = 0.f;
    for (int i = t; i < D; i += nt) {
      float v = __bfloat162float(x[m * D + i]);
      xn[m * D + i] = v * __bfloat162float(g[i]);
      s += v * v;
    }
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
    if (t % 32 == 0) stat[m][t / 32] = s;
  }
  __syncthreads();
  float inv[M];
#pragma unroll
  for (int m = 0; m < M; ++m) {
    float s = 0.f;
    for (int i = 0; i < nt / 32; ++i) s += stat[m][i];
    inv[m] = rsqrtf(s / D + 1e-5f);
  }
  float acc[M][8];
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[m][j] = 0.f;
  for (int r = 0; r < ROWS; r += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float f[8];
      unpack(buf[u], f);
      if (r + U + u < ROWS) buf[u] = LOADW(w + size_t((r + U + u) * KG + kg) * ld + col8);
#pragma unroll
      for (int m = 0; m < M; ++m) {
        float a = xn[m * D + (r + u) * KG + kg];
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[m][j] = fmaf(a, f[j], acc[m][j]);
      }
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) red[(kg * M + m) * 2 * CG + piece * 8 + j] = acc[m][j];
  __syncthreads();
  for (int o = t; o < M * CG; o += nt) {
    int m = o / CG, c = o % CG;
    float gs = 0.f, us = 0.f;
    for (int k = 0; k < KG; ++k) {
      gs += red[(k * M + m) * 2 * CG + c];
      us += red[(k * M + m) * 2 * CG + CG + c];
    }
    gs *= inv[m];
    us *= inv[m];
    act[size_t(m) * F + blockIdx.x * CG + c] = __float2bfloat16(gs / (1.f + __expf(-gs)) * us);
  }
}

// The pair with K split over a cluster of C blocks: block r of a cluster
// takes rows r, r + C, ... of each k-group's stride (k = (i * KG + g) * C + r),
// the blocks' k-group sums meet in block 0's shared memory through
// distributed shared memory, and block 0 writes the epilogue.
template <int M, int CG, int KG, int U, int C>
__global__ void __launch_bounds__((2 * CG / 8) * KG) pair_cluster(
    const __nv_bfloat16 *__restrict__ x, const __nv_bfloat16 *__restrict__ g,
    const uint4 *__restrict__ wg, const uint4 *__restrict__ wu, __nv_bfloat16 *__restrict__ act) {
  namespace cg = cooperative_groups;
  constexpr int PIECES = 2 * CG / 8, ROWS = D / KG / C;
  static_assert(ROWS % U == 0, "rows per thread");
  extern __shared__ float smem[];
  float *xn = smem;
  float *red = smem + M * D;  // [KG][M][2*CG], then block 0 adds the others
  __shared__ float stat[M][32];
  cg::cluster_group cluster = cg::this_cluster();
  const int rank = int(cluster.block_rank());
  const int t = threadIdx.x, piece = t % PIECES, kg = t / PIECES;
  const bool up = piece >= CG / 8;
  const uint4 *w = up ? wu : wg;
  const int tile = blockIdx.x / C;
  const int col8 = tile * (CG / 8) + (up ? piece - CG / 8 : piece);
  const int ld = F / 8;
  auto row_of = [&](int i) { return (i * KG + kg) * C + rank; };
  uint4 buf[U];
#pragma unroll
  for (int u = 0; u < U; ++u) buf[u] = LOADW(w + size_t(row_of(u)) * ld + col8);
  const int nt = blockDim.x;
  for (int m = 0; m < M; ++m) {
    float s = 0.f;
    for (int i = t; i < D; i += nt) {
      float v = __bfloat162float(x[m * D + i]);
      xn[m * D + i] = v * __bfloat162float(g[i]);
      s += v * v;
    }
    for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
    if (t % 32 == 0) stat[m][t / 32] = s;
  }
  __syncthreads();
  float inv[M];
#pragma unroll
  for (int m = 0; m < M; ++m) {
    float s = 0.f;
    for (int i = 0; i < nt / 32; ++i) s += stat[m][i];
    inv[m] = rsqrtf(s / D + 1e-5f);
  }
  float acc[M][8];
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[m][j] = 0.f;
  for (int r = 0; r < ROWS; r += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float f[8];
      unpack(buf[u], f);
      if (r + U + u < ROWS) buf[u] = LOADW(w + size_t(row_of(r + U + u)) * ld + col8);
#pragma unroll
      for (int m = 0; m < M; ++m) {
        float a = xn[m * D + row_of(r + u)];
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[m][j] = fmaf(a, f[j], acc[m][j]);
      }
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) red[(kg * M + m) * 2 * CG + piece * 8 + j] = acc[m][j];
  __syncthreads();
  // Each block first folds its own k-groups (columns x M sums), then the
  // cluster's blocks meet in block 0.
  float *folded = red;  // reuse: [M][2*CG] at the start
  float mine[2] = {0.f, 0.f};
  const int outs = M * 2 * CG;
  for (int o = t, n = 0; o < outs && n < 2; o += nt, ++n) {
    int m = o / (2 * CG), c = o % (2 * CG);
    float s = 0.f;
    for (int k = 0; k < KG; ++k) s += red[(k * M + m) * 2 * CG + c];
    mine[n] = s;
  }
  __syncthreads();
  for (int o = t, n = 0; o < outs && n < 2; o += nt, ++n) folded[o] = mine[n];
  cluster.sync();
  if (rank == 0) {
    for (int o = t; o < M * CG; o += nt) {
      int m = o / CG, c = o % CG;
      float gs = 0.f, us = 0.f;
      for (int b = 0; b < C; ++b) {
        float *remote = cluster.map_shared_rank(folded, b);
        gs += remote[m * 2 * CG + c];
        us += remote[m * 2 * CG + CG + c];
      }
      gs *= inv[m];
      us *= inv[m];
      act[size_t(m) * F + tile * CG + c] = __float2bfloat16(gs / (1.f + __expf(-gs)) * us);
    }
  }
  cluster.sync();
}

// Down: act [M, F] x Wd [F, D] -> S slices [S][M][D] f32. Block: CG columns,
// a K range of F / S, KG k-groups.
template <int M, int CG, int KG, int U, int S>
__global__ void __launch_bounds__((CG / 8) * KG) down(const __nv_bfloat16 *__restrict__ act,
                                                      const uint4 *__restrict__ wd,
                                                      float *__restrict__ slices) {
  constexpr int PIECES = CG / 8, KR = F / S, ROWS = KR / KG;
  extern __shared__ float smem[];
  float *a = smem;             // [M][KR]
  float *red = smem + M * KR;  // [KG][M][CG]
  const int t = threadIdx.x, piece = t % PIECES, kg = t / PIECES, nt = blockDim.x;
  static_assert(ROWS % U == 0, "rows per thread");
  const int slice = blockIdx.y, kbase = slice * KR;
  const int col8 = blockIdx.x * PIECES + piece, ld = D / 8;
  uint4 buf[U];
#pragma unroll
  for (int u = 0; u < U; ++u) buf[u] = LOADW(wd + size_t(kbase + u * KG + kg) * ld + col8);
  for (int i = t; i < M * KR; i += nt) a[i] = __bfloat162float(act[(i / KR) * F + kbase + i % KR]);
  __syncthreads();
  float acc[M][8];
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[m][j] = 0.f;
  for (int r = 0; r < ROWS; r += U) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
      float f[8];
      unpack(buf[u], f);
      if (r + U + u < ROWS) buf[u] = LOADW(wd + size_t(kbase + (r + U + u) * KG + kg) * ld + col8);
#pragma unroll
      for (int m = 0; m < M; ++m) {
        float av = a[m * KR + (r + u) * KG + kg];
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[m][j] = fmaf(av, f[j], acc[m][j]);
      }
    }
  }
#pragma unroll
  for (int m = 0; m < M; ++m)
#pragma unroll
    for (int j = 0; j < 8; ++j) red[(kg * M + m) * CG + piece * 8 + j] = acc[m][j];
  __syncthreads();
  for (int o = t; o < M * CG; o += nt) {
    int m = o / CG, c = o % CG;
    float s = 0.f;
    for (int k = 0; k < KG; ++k) s += red[(k * M + m) * CG + c];
    slices[(size_t(slice) * M + m) * D + blockIdx.x * CG + c] = s;
  }
}

// The element-wise kernels of the cuBLAS path.
__global__ void norm_k(const __nv_bfloat16 *x, const __nv_bfloat16 *w, __nv_bfloat16 *xn) {
  const __nv_bfloat16 *row = x + size_t(blockIdx.x) * D;
  float s = 0.f;
  for (int i = threadIdx.x; i < D; i += blockDim.x) {
    float v = __bfloat162float(row[i]);
    s += v * v;
  }
  __shared__ float part[8];
  for (int o = 16; o; o >>= 1) s += __shfl_xor_sync(~0u, s, o);
  if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = s;
  __syncthreads();
  float tt = 0.f;
  for (int i = 0; i < 8; ++i) tt += part[i];
  float inv = rsqrtf(tt / D + 1e-5f);
  for (int i = threadIdx.x; i < D; i += blockDim.x)
    xn[size_t(blockIdx.x) * D + i] =
        __float2bfloat16(__bfloat162float(row[i]) * inv * __bfloat162float(w[i]));
}
__global__ void silu_k(const __nv_bfloat16 *gu, __nv_bfloat16 *act, size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    float gg = __bfloat162float(gu[i]), u = __bfloat162float(gu[n + i]);
    act[i] = __float2bfloat16(gg / (1.f + __expf(-gg)) * u);
  }
}
__global__ void fill(__nv_bfloat16 *p, size_t n, unsigned seed, float scale) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    unsigned v = unsigned(i) * 2654435761u ^ seed;
    v ^= v >> 13;
    v *= 0x5bd1e995u;
    v ^= v >> 15;
    p[i] = __float2bfloat16((float(v & 0xffff) / 65536.f - 0.5f) * scale);
  }
}

struct Bufs {
  __nv_bfloat16 *x, *g, *xn, *wgu[COPIES], *wd[COPIES], *gu, *act, *act_ref;
  float *slices, *slices_ref;
  cublasHandle_t h;
  cudaStream_t s;
};

template <typename F>
static float time_graph(Bufs &b, F body) {
  cudaGraph_t gr;
  cudaGraphExec_t ge;
  const int reps = 21;
  CHECK(cudaStreamBeginCapture(b.s, cudaStreamCaptureModeThreadLocal));
  for (int r = 0; r < reps; ++r) body(r % COPIES);
  CHECK(cudaStreamEndCapture(b.s, &gr));
  CHECK(cudaGraphInstantiate(&ge, gr, 0));
  CHECK(cudaGraphLaunch(ge, b.s));
  CHECK(cudaStreamSynchronize(b.s));
  cudaEvent_t a, c;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&c));
  std::vector<float> t;
  for (int i = 0; i < 20; ++i) {
    CHECK(cudaEventRecord(a, b.s));
    CHECK(cudaGraphLaunch(ge, b.s));
    CHECK(cudaEventRecord(c, b.s));
    CHECK(cudaEventSynchronize(c));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, c));
    t.push_back(ms * 1000.f / reps);
  }
  CHECK(cudaGraphExecDestroy(ge));
  CHECK(cudaGraphDestroy(gr));
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static double rel_err(const std::vector<float> &a, const std::vector<float> &r) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - r[i]) * double(a[i] - r[i]);
    den += double(r[i]) * r[i];
  }
  return std::sqrt(num / std::max(den, 1e-30));
}
static std::vector<float> to_host_bf16(const __nv_bfloat16 *p, size_t n) {
  std::vector<__nv_bfloat16> h(n);
  CHECK(cudaMemcpy(h.data(), p, n * 2, cudaMemcpyDeviceToHost));
  std::vector<float> f(n);
  for (size_t i = 0; i < n; ++i) f[i] = __bfloat162float(h[i]);
  return f;
}
static std::vector<float> to_host_f32(const float *p, size_t n) {
  std::vector<float> f(n);
  CHECK(cudaMemcpy(f.data(), p, n * 4, cudaMemcpyDeviceToHost));
  return f;
}

template <int M>
static void cublas_pair(Bufs &b, int c) {
  float one = 1.f, zero = 0.f;
  norm_k<<<M, 256, 0, b.s>>>(b.x, b.g, b.xn);
  cublasGemmStridedBatchedEx(b.h, CUBLAS_OP_N, CUBLAS_OP_N, F, M, D, &one, b.wgu[c], CUDA_R_16BF,
                             F, size_t(D) * F, b.xn, CUDA_R_16BF, D, 0, &zero, b.gu, CUDA_R_16BF,
                             F, size_t(M) * F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  silu_k<<<std::min(264, (M * F + 255) / 256), 256, 0, b.s>>>(b.gu, b.act_ref, size_t(M) * F);
}
template <int M>
static void cublas_down(Bufs &b, int c, const __nv_bfloat16 *act, float *out) {
  float one = 1.f, zero = 0.f;
  const int ks = F / 2;
  cublasGemmStridedBatchedEx(b.h, CUBLAS_OP_N, CUBLAS_OP_N, D, M, ks, &one, b.wd[c], CUDA_R_16BF,
                             D, size_t(ks) * D, act, CUDA_R_16BF, F, ks, &zero, out, CUDA_R_32F, D,
                             size_t(M) * D, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

template <int M, int CG, int KG, int U>
static void run_pair(Bufs &b, const std::vector<float> &ref) {
  constexpr int threads = (2 * CG / 8) * KG;
  size_t smem = (size_t(M) * D + size_t(KG) * M * 2 * CG) * 4;
  auto k = pair<M, CG, KG, U>;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  auto launch = [&](int c) {
    const uint4 *wg = reinterpret_cast<const uint4 *>(b.wgu[c]);
    const uint4 *wu = reinterpret_cast<const uint4 *>(b.wgu[c] + size_t(D) * F);
    k<<<F / CG, threads, smem, b.s>>>(b.x, b.g, wg, wu, b.act);
  };
  float us = time_graph(b, launch);
  CHECK(cudaGetLastError());
  double e = rel_err(to_host_bf16(b.act, size_t(M) * F), ref);
  std::printf("  pair  M=%-2d CG=%-3d KG=%-3d U=%-2d blocks=%4d threads=%4d  %7.2f us  %5.2f TB/s  rel %.1e\n",
              M, CG, KG, U, F / CG, threads, us, 2.0 * D * F * 2 / us / 1e6, e);
}


template <int M, int CG, int KG, int U, int C>
static void run_pair_cluster(Bufs &b, const std::vector<float> &ref) {
  constexpr int threads = (2 * CG / 8) * KG;
  size_t smem = (size_t(M) * D + size_t(KG) * M * 2 * CG) * 4;
  auto k = pair_cluster<M, CG, KG, U, C>;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  auto launch = [&](int c) {
    const uint4 *wg = reinterpret_cast<const uint4 *>(b.wgu[c]);
    const uint4 *wu = reinterpret_cast<const uint4 *>(b.wgu[c] + size_t(D) * F);
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(F / CG * C);
    config.blockDim = dim3(threads);
    config.dynamicSmemBytes = smem;
    config.stream = b.s;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    config.attrs = attr;
    config.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&config, k, b.x, b.g, wg, wu, b.act));
  };
  float us = time_graph(b, launch);
  CHECK(cudaGetLastError());
  double e = rel_err(to_host_bf16(b.act, size_t(M) * F), ref);
  std::printf("  pairC M=%-2d CG=%-3d KG=%-3d U=%-2d C=%d blocks=%4d threads=%4d  %7.2f us  %5.2f TB/s  rel %.1e\n",
              M, CG, KG, U, C, F / CG * C, threads, us, 2.0 * D * F * 2 / us / 1e6, e);
}

template <int M, int CG, int KG, int U, int S>
static void run_down(Bufs &b, const std::vector<float> &ref) {
  constexpr int threads = (CG / 8) * KG;
  size_t smem = (size_t(M) * (F / S) + size_t(KG) * M * CG) * 4;
  auto k = down<M, CG, KG, U, S>;
  CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  auto launch = [&](int c) {
    k<<<dim3(D / CG, S), threads, smem, b.s>>>(b.act_ref, reinterpret_cast<const uint4 *>(b.wd[c]),
                                               b.slices);
  };
  float us = time_graph(b, launch);
  CHECK(cudaGetLastError());
  auto got = to_host_f32(b.slices, size_t(S) * M * D);
  std::vector<float> sum(size_t(M) * D, 0.f);
  for (int s = 0; s < S; ++s)
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += got[s * sum.size() + i];
  std::printf("  down  M=%-2d CG=%-3d KG=%-3d U=%-2d S=%d blocks=%4d threads=%4d  %7.2f us  %5.2f TB/s  rel %.1e\n",
              M, CG, KG, U, S, D / CG * S, threads, us, 1.0 * D * F * 2 / us / 1e6,
              rel_err(sum, ref));
}

template <int M>
static void sweep(Bufs &b) {
  // References (cuBLAS path) and its times.
  cublas_pair<M>(b, 0);
  CHECK(cudaStreamSynchronize(b.s));
  auto act_ref = to_host_bf16(b.act_ref, size_t(M) * F);
  float t_pair = time_graph(b, [&](int c) { cublas_pair<M>(b, c); });
  std::printf("M=%d cuBLAS: norm + batched pair + SiLU kernel %7.2f us\n", M, t_pair);
  cublas_down<M>(b, 0, b.act_ref, b.slices_ref);
  CHECK(cudaStreamSynchronize(b.s));
  auto sl = to_host_f32(b.slices_ref, size_t(2) * M * D);
  std::vector<float> down_ref(size_t(M) * D);
  for (size_t i = 0; i < down_ref.size(); ++i) down_ref[i] = sl[i] + sl[down_ref.size() + i];
  float t_down = time_graph(b, [&](int c) { cublas_down<M>(b, c, b.act_ref, b.slices_ref); });
  std::printf("M=%d cuBLAS: down, 2 split-K slices %7.2f us  %5.2f TB/s\n", M, t_down,
              1.0 * D * F * 2 / t_down / 1e6);
  run_pair<M, 64, 64, 4>(b, act_ref);
  run_pair<M, 64, 32, 8>(b, act_ref);
  run_pair_cluster<M, 64, 32, 4, 2>(b, act_ref);
  run_pair_cluster<M, 64, 32, 2, 2>(b, act_ref);
  run_pair_cluster<M, 64, 16, 8, 2>(b, act_ref);
  run_pair_cluster<M, 64, 16, 4, 4>(b, act_ref);
  run_pair_cluster<M, 64, 32, 2, 4>(b, act_ref);
  run_pair_cluster<M, 64, 16, 2, 8>(b, act_ref);
  run_pair_cluster<M, 32, 32, 4, 2>(b, act_ref);
  run_down<M, 64, 32, 8, 4>(b, down_ref);
  run_down<M, 64, 64, 4, 4>(b, down_ref);
  run_down<M, 32, 32, 8, 4>(b, down_ref);
  run_down<M, 64, 32, 4, 8>(b, down_ref);
  run_down<M, 128, 16, 8, 8>(b, down_ref);
  run_down<M, 32, 64, 8, 2>(b, down_ref);
}

int main() {
  Bufs b{};
  cublasCreate(&b.h);
  CHECK(cudaStreamCreateWithFlags(&b.s, cudaStreamNonBlocking));
  cublasSetStream(b.h, b.s);
  void *ws;
  CHECK(cudaMalloc(&ws, 32 << 20));
  cublasSetWorkspace(b.h, ws, 32 << 20);
  const int mmax = 16;
  CHECK(cudaMalloc(&b.x, size_t(mmax) * D * 2));
  CHECK(cudaMalloc(&b.g, size_t(D) * 2));
  CHECK(cudaMalloc(&b.xn, size_t(mmax) * D * 2));
  CHECK(cudaMalloc(&b.gu, size_t(2) * mmax * F * 2));
  CHECK(cudaMalloc(&b.act, size_t(mmax) * F * 2));
  CHECK(cudaMalloc(&b.act_ref, size_t(mmax) * F * 2));
  CHECK(cudaMalloc(&b.slices, size_t(8) * mmax * D * 4));
  CHECK(cudaMalloc(&b.slices_ref, size_t(2) * mmax * D * 4));
  fill<<<1024, 256>>>(b.x, size_t(mmax) * D, 1, 2.f);
  fill<<<1024, 256>>>(b.g, D, 2, 2.f);
  for (int c = 0; c < COPIES; ++c) {
    CHECK(cudaMalloc(&b.wgu[c], size_t(2) * D * F * 2));
    CHECK(cudaMalloc(&b.wd[c], size_t(F) * D * 2));
    fill<<<1024, 256>>>(b.wgu[c], size_t(2) * D * F, 3, 0.05f);  // same values in each copy
    fill<<<1024, 256>>>(b.wd[c], size_t(F) * D, 4, 0.05f);
  }
  CHECK(cudaDeviceSynchronize());
  sweep<1>(b);
#ifdef ALL_ROWS
  sweep<2>(b);
  sweep<4>(b);
#endif
  return 0;
}
