// Probe (not shipped): a register-only tensor-core GEMM for few rows,
// C[M,N] = A[M,K] @ B[K,N] (bf16 in, f32 accumulate, bf16 out), M <= 16.
// Each warp streams a 16 x (8V) tile of B per k-step straight into
// mma.sync m16n8k16 fragments: lane t (q = t % 4, g = t / 4) loads V
// columns (g*V ..) of rows 4q..4q+3 of the k-step, so logical k
// {2q,2q+1,2q+8,2q+9} = physical rows 4q..4q+3 and A's fragment is one
// 8-byte load of x[m][4q..4q+3]. Warps split K; a shared-memory sum
// across warps in fixed order; 8 consecutive output columns per lane.
// Timed beside cuBLAS (cublasGemmEx) for the Llama-3-8B TP shapes.
#include <cuda_bf16.h>
#include <cublas_v2.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cmath>

#define CK(x) do { auto e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

__device__ __forceinline__ unsigned pack(__nv_bfloat16 lo, __nv_bfloat16 hi) {
  return (unsigned)__bfloat16_as_ushort(lo) | ((unsigned)__bfloat16_as_ushort(hi) << 16);
}

__device__ __forceinline__ void mma(float c[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                    unsigned b0, unsigned b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

template <int V> struct Vec;
template <> struct Vec<4> { using T = uint2; };
template <> struct Vec<8> { using T = uint4; };

// PAIR: two weights B0, B1 (same shape), out = silu(a@B0) * (a@B1).
template <int V, int WARPS, int U, bool PAIR>
__global__ void __launch_bounds__(WARPS * 32) skinny(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b0,
                                          const __nv_bfloat16* __restrict__ b1, __nv_bfloat16* __restrict__ c,
                                          int M, int N, int K) {
  constexpr int NW = PAIR ? 2 : 1;
  using VT = typename Vec<V>::T;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, q = lane & 3, g = lane >> 2;
  int col0 = blockIdx.x * (8 * V);
  float acc[NW][V][4];
#pragma unroll
  for (int w = 0; w < NW; w++)
#pragma unroll
    for (int j = 0; j < V; j++) acc[w][j][0] = acc[w][j][1] = acc[w][j][2] = acc[w][j][3] = 0.f;
  int steps = K / 16;
  const __nv_bfloat16* bs[2] = {b0, b1};
  bool r0 = g < M, r1 = g + 8 < M;
  for (int s0 = warp * U; s0 < steps; s0 += WARPS * U) {
    VT bv[U][NW][4];
    uint2 av[U][2];
#pragma unroll
    for (int u = 0; u < U; u++) {
      int s = s0 + u;
      if (s < steps) {
        int k = s * 16 + 4 * q;
#pragma unroll
        for (int w = 0; w < NW; w++)
#pragma unroll
          for (int i = 0; i < 4; i++)
            bv[u][w][i] = __ldg(reinterpret_cast<const VT*>(bs[w] + (size_t)(k + i) * N + col0 + g * V));
        av[u][0] = r0 ? *reinterpret_cast<const uint2*>(a + (size_t)g * K + k) : make_uint2(0, 0);
        av[u][1] = r1 ? *reinterpret_cast<const uint2*>(a + (size_t)(g + 8) * K + k) : make_uint2(0, 0);
      }
    }
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (s0 + u < steps) {
        unsigned a0 = av[u][0].x, a2 = av[u][0].y, a1 = av[u][1].x, a3 = av[u][1].y;
#pragma unroll
        for (int w = 0; w < NW; w++) {
          const __nv_bfloat16* e[4] = {reinterpret_cast<const __nv_bfloat16*>(&bv[u][w][0]),
                                       reinterpret_cast<const __nv_bfloat16*>(&bv[u][w][1]),
                                       reinterpret_cast<const __nv_bfloat16*>(&bv[u][w][2]),
                                       reinterpret_cast<const __nv_bfloat16*>(&bv[u][w][3])};
#pragma unroll
          for (int j = 0; j < V; j++) mma(acc[w][j], a0, a1, a2, a3, pack(e[0][j], e[1][j]), pack(e[2][j], e[3][j]));
        }
      }
    }
  }
  // Sum across warps in shared memory.
  __shared__ float red[WARPS][NW * V * 4][32];
#pragma unroll
  for (int w = 0; w < NW; w++)
#pragma unroll
    for (int j = 0; j < V; j++)
#pragma unroll
      for (int r = 0; r < 4; r++) red[warp][(w * V + j) * 4 + r][lane] = acc[w][j][r];
  __syncthreads();
  if (warp == 0) {
    float tot[NW][V][4];
#pragma unroll
    for (int w = 0; w < NW; w++)
#pragma unroll
      for (int j = 0; j < V; j++)
#pragma unroll
        for (int r = 0; r < 4; r++) {
          float s = 0.f;
          for (int ww = 0; ww < WARPS; ww++) s += red[ww][(w * V + j) * 4 + r][lane];
          tot[w][j][r] = s;
        }
    // n-tile j, mma column n = 2q + h -> physical col0 + n*V + j.
#pragma unroll
    for (int half = 0; half < 2; half++) {
      int m = g + 8 * half;
      if (m >= M) continue;
#pragma unroll
      for (int h = 0; h < 2; h++) {
        __nv_bfloat16 out[V];
#pragma unroll
        for (int j = 0; j < V; j++) {
          float v = tot[0][j][half * 2 + h];
          if (PAIR) { float u = tot[NW - 1][j][half * 2 + h]; v = v / (1.f + __expf(-v)) * u; }
          out[j] = __float2bfloat16(v);
        }
        *reinterpret_cast<VT*>(c + (size_t)m * N + col0 + (2 * q + h) * V) = *reinterpret_cast<VT*>(out);
      }
    }
  }
}


// Warps side by side along N (a block reads WARPS*8V contiguous columns of
// each row), K split over gridDim.y; partial sums added with f32 atomics
// (speed probe of the streaming loop only). Loads of the next U k-steps are
// issued before the current ones are multiplied (register double buffer).
template <int V, int WARPS, int U>
__global__ void __launch_bounds__(WARPS * 32) wide(const __nv_bfloat16* __restrict__ a, const __nv_bfloat16* __restrict__ b,
                                          float* __restrict__ c, int M, int N, int K) {
  using VT = typename Vec<V>::T;
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, q = lane & 3, g = lane >> 2;
  int col0 = (blockIdx.x * WARPS + warp) * (8 * V);
  int kper = K / gridDim.y, kbeg = blockIdx.y * kper;
  float acc[V][4];
#pragma unroll
  for (int j = 0; j < V; j++) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  int steps = kper / 16;
  bool r0 = g < M, r1 = g + 8 < M;
  VT bv[2][U][4];
  uint2 av[2][U][2];
  auto load = [&](int buf, int s0) {
#pragma unroll
    for (int u = 0; u < U; u++) {
      int s = s0 + u;
      if (s < steps) {
        int k = kbeg + s * 16 + 4 * q;
#pragma unroll
        for (int i = 0; i < 4; i++) bv[buf][u][i] = __ldg(reinterpret_cast<const VT*>(b + (size_t)(k + i) * N + col0 + g * V));
        av[buf][u][0] = r0 ? *reinterpret_cast<const uint2*>(a + (size_t)g * K + k) : make_uint2(0, 0);
        av[buf][u][1] = r1 ? *reinterpret_cast<const uint2*>(a + (size_t)(g + 8) * K + k) : make_uint2(0, 0);
      }
    }
  };
  auto compute = [&](int buf, int s0) {
#pragma unroll
    for (int u = 0; u < U; u++) {
      if (s0 + u < steps) {
        unsigned a0 = av[buf][u][0].x, a2 = av[buf][u][0].y, a1 = av[buf][u][1].x, a3 = av[buf][u][1].y;
        const __nv_bfloat16* e[4] = {reinterpret_cast<const __nv_bfloat16*>(&bv[buf][u][0]),
                                     reinterpret_cast<const __nv_bfloat16*>(&bv[buf][u][1]),
                                     reinterpret_cast<const __nv_bfloat16*>(&bv[buf][u][2]),
                                     reinterpret_cast<const __nv_bfloat16*>(&bv[buf][u][3])};
#pragma unroll
        for (int j = 0; j < V; j++) mma(acc[j], a0, a1, a2, a3, pack(e[0][j], e[1][j]), pack(e[2][j], e[3][j]));
      }
    }
  };
  load(0, 0);
  for (int s0 = 0; s0 < steps; s0 += 2 * U) {
    load(1, s0 + U);
    compute(0, s0);
    load(0, s0 + 2 * U);
    compute(1, s0 + U);
  }
#pragma unroll
  for (int half = 0; half < 2; half++) {
    int m = g + 8 * half;
    if (m >= M) continue;
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
      for (int j = 0; j < V; j++) atomicAdd(c + (size_t)m * N + col0 + (2 * q + h) * V + j, acc[j][half * 2 + h]);
  }
}

__global__ void readbw(const uint4* __restrict__ p, size_t n, unsigned* out) {
  unsigned s = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint4 v = __ldg(p + i); s ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (s == 0x12345678) *out = s;
}

template <int V, int WARPS, int U>
void run_wide(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c, __nv_bfloat16* ref, int M, int N, int K, int S, double bytes) {
  dim3 grid(N / (8 * V * WARPS), S);
  cudaMemset(c, 0, (size_t)M * N * 4);
  auto f = [&] { wide<V, WARPS, U><<<grid, WARPS * 32>>>(a, b, c, M, N, K); };
  f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  std::vector<float> x((size_t)M * N); std::vector<__nv_bfloat16> y((size_t)M * N);
  cudaMemcpy(x.data(), c, x.size() * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(y.data(), ref, y.size() * 2, cudaMemcpyDeviceToHost);
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); i++) { double d = x[i] - __bfloat162float(y[i]); num += d * d; den += (double)__bfloat162float(y[i]) * __bfloat162float(y[i]); }
  float t = time_us(f);
  printf("  wide V=%d W=%2d U=%d S=%2d grid %4d  %7.2f us  %5.2f TB/s  relL2(first) %.2e\n", V, WARPS, U, S, grid.x * grid.y, t, bytes / t / 1e6, std::sqrt(num / den));
}

__global__ void silu_mul(const __nv_bfloat16* g, const __nv_bfloat16* u, __nv_bfloat16* o, size_t n) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) { float x = __bfloat162float(g[i]); o[i] = __float2bfloat16(x / (1.f + __expf(-x)) * __bfloat162float(u[i])); }
}

__global__ void fill(__nv_bfloat16* p, size_t n, unsigned seed, float scale) {
  size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
  if (i < n) { unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
    p[i] = __float2bfloat16(((h & 0xffff) / 65535.f - 0.5f) * scale); }
}

template <typename F> float time_us(F f, int iters = 200) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 20; i++) f();
  cudaEventRecord(a);
  for (int i = 0; i < iters; i++) f();
  cudaEventRecord(b); CK(cudaEventSynchronize(b));
  float ms; cudaEventElapsedTime(&ms, a, b); return ms * 1000.f / iters;
}

static cublasHandle_t handle;
// Row-major C[M,N] = A[M,K] @ B[K,N] as column-major C^T = B^T A^T.
void gemm(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c, int M, int N, int K) {
  float one = 1.f, zero = 0.f;
  cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, b, CUDA_R_16BF, N, a, CUDA_R_16BF, K, &zero, c,
               CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
}

double max_rel(std::vector<__nv_bfloat16>& x, std::vector<__nv_bfloat16>& y) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); i++) { double d = __bfloat162float(x[i]) - __bfloat162float(y[i]); num += d * d; den += (double)__bfloat162float(y[i]) * __bfloat162float(y[i]); }
  return std::sqrt(num / (den + 1e-30));
}

template <int V, int WARPS, int U, bool PAIR>
void run(const char* name, const __nv_bfloat16* a, const __nv_bfloat16* b0, const __nv_bfloat16* b1, __nv_bfloat16* c,
         __nv_bfloat16* ref, int M, int N, int K, double bytes) {
  dim3 grid(N / (8 * V));
  auto f = [&] { skinny<V, WARPS, U, PAIR><<<grid, WARPS * 32>>>(a, b0, b1, c, M, N, K); };
  f(); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  std::vector<__nv_bfloat16> x((size_t)M * N), y((size_t)M * N);
  cudaMemcpy(x.data(), c, x.size() * 2, cudaMemcpyDeviceToHost);
  cudaMemcpy(y.data(), ref, y.size() * 2, cudaMemcpyDeviceToHost);
  float t = time_us(f);
  printf("  %-28s V=%d W=%2d U=%d  %7.2f us  %5.2f TB/s  relL2 %.2e\n", name, V, WARPS, U, t, bytes / t / 1e6, max_rel(x, y));
}

int main() {
  cublasCreate(&handle);
  const int D = 4096, F = 7168;
  __nv_bfloat16 *x, *wg, *wu, *wd, *g, *u, *act, *ref, *out, *ref2;
  size_t MX = 64;
  CK(cudaMalloc(&x, MX * F * 2)); CK(cudaMalloc(&wg, (size_t)D * F * 2)); CK(cudaMalloc(&wu, (size_t)D * F * 2));
  CK(cudaMalloc(&wd, (size_t)F * D * 2)); CK(cudaMalloc(&g, MX * F * 2)); CK(cudaMalloc(&u, MX * F * 2));
  CK(cudaMalloc(&act, MX * F * 2)); CK(cudaMalloc(&ref, MX * F * 2)); CK(cudaMalloc(&out, MX * F * 2)); CK(cudaMalloc(&ref2, MX * F * 2));
  fill<<<(MX * F + 255) / 256, 256>>>(x, MX * F, 1, 2.f);
  fill<<<((size_t)D * F + 255) / 256, 256>>>(wg, (size_t)D * F, 2, 0.05f);
  fill<<<((size_t)D * F + 255) / 256, 256>>>(wu, (size_t)D * F, 3, 0.05f);
  fill<<<((size_t)D * F + 255) / 256, 256>>>(wd, (size_t)D * F, 4, 0.05f);
  CK(cudaDeviceSynchronize());
  float* cf; CK(cudaMalloc(&cf, MX * 16384 * 4)); unsigned* junk; CK(cudaMalloc(&junk, 4));
  for (int blocks : {132, 264, 528, 1056}) {
    float t = time_us([&] { readbw<<<blocks, 512>>>((const uint4*)wd, (size_t)F * D * 2 / 16, junk); });
    printf("read 58.7 MB, %d blocks x 512: %.2f us %.2f TB/s\n", blocks, t, F * D * 2.0 / t / 1e6);
  }
  for (int M : {1, 16}) {
    printf("M=%d\n", M);
    double bytes = (double)F * D * 2;
    gemm(x, wd, ref, M, D, F); CK(cudaDeviceSynchronize());
    printf("  cublas down                 %7.2f us\n", time_us([&] { gemm(x, wd, ref, M, D, F); }));
    run_wide<4, 8, 2>(x, wd, cf, ref, M, D, F, 8, bytes);
    run_wide<4, 8, 2>(x, wd, cf, ref, M, D, F, 16, bytes);
    run_wide<4, 8, 4>(x, wd, cf, ref, M, D, F, 16, bytes);
    run_wide<4, 4, 4>(x, wd, cf, ref, M, D, F, 16, bytes);
    run_wide<4, 4, 4>(x, wd, cf, ref, M, D, F, 28, bytes);
    run_wide<8, 4, 2>(x, wd, cf, ref, M, D, F, 16, bytes);
    run_wide<8, 4, 4>(x, wd, cf, ref, M, D, F, 28, bytes);
    run_wide<8, 8, 2>(x, wd, cf, ref, M, D, F, 28, bytes);
    run_wide<8, 2, 4>(x, wd, cf, ref, M, D, F, 28, bytes);
    // Gate alone: [M,D] @ [D,F].
    bytes = (double)D * F * 2;
    gemm(x, wg, g, M, F, D); CK(cudaDeviceSynchronize());
    printf("  cublas gate                 %7.2f us\n", time_us([&] { gemm(x, wg, g, M, F, D); }));
    run_wide<4, 8, 2>(x, wg, cf, g, M, F, D, 8, bytes);
    run_wide<4, 4, 4>(x, wg, cf, g, M, F, D, 8, bytes);
    run_wide<8, 4, 4>(x, wg, cf, g, M, F, D, 16, bytes);
    run_wide<8, 4, 2>(x, wg, cf, g, M, F, D, 8, bytes);
    run_wide<8, 2, 4>(x, wg, cf, g, M, F, D, 16, bytes);
  }
  return 0;
}
