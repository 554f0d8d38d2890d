// Probe (issue 32): a skinny matmul that streams the [K, N] row-major bf16
// weight straight into registers (16-byte loads, no shared-memory staging)
// and feeds mma.sync m16n8k16 by pairing rows k, k+1 with a byte permute.
// A prototype to decide whether the compiler's generated kernel should take
// this shape; not shipped. Built on the device machine with nvcc as a shared
// library and driven from probe.py beside cuBLAS (torch.mm).
//
// Lane (g = lane / 4, q = lane % 4) loads rows k0+2q, k0+2q+1, k0+2q+8,
// k0+2q+9 at columns [c + 8g, c + 8g + 8): the B fragments of 8 mmas, one
// per column j of its 16-byte piece (mma j's logical column g is physical
// column c + 8g + j). Warps of a block split K (and the pair's weights);
// their sums meet in shared memory.
#include <cuda_bf16.h>
#include <cstdint>
#include <cstdio>

#include "mma_rows.cuh"

template <int W, int U, int P, bool AV>
__global__ void __launch_bounds__(W * 32) regmma(const uint16_t *__restrict__ a,
                                                 const uint4 *__restrict__ w0,
                                                 const uint4 *__restrict__ w1, void *out, int M,
                                                 int K, int N, int S, float *ws, unsigned *cnt) {
  extern __shared__ float red[];
  __shared__ bool last;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int p = warp % P, r = warp / P, R = W / P;
  const uint4 *wt = p == 0 ? w0 : w1;
  const int ld = N / 8;
  const int col = blockIdx.x * 64 + g * 8;
  const int steps = K / 16;
  const int idx = blockIdx.y * R + r, ranges = S * R;
  const int s0 = (long)steps * idx / ranges, s1 = (long)steps * (idx + 1) / ranges;
  float acc[8][4];
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[j][i] = 0.f;
  const uint32_t *a32 = reinterpret_cast<const uint32_t *>(a);
  const bool lo = g < M, hi = g + 8 < M;
  auto step = [&](const uint4 *rows, int k0) {
    uint32_t a0 = lo ? __ldg(a32 + (g * K + k0 + 2 * q) / 2) : 0;
    uint32_t a1 = hi ? __ldg(a32 + ((g + 8) * K + k0 + 2 * q) / 2) : 0;
    uint32_t a2 = lo ? __ldg(a32 + (g * K + k0 + 2 * q + 8) / 2) : 0;
    uint32_t a3 = hi ? __ldg(a32 + ((g + 8) * K + k0 + 2 * q + 8) / 2) : 0;
    mma_step(acc, {a0, a1, a2, a3}, rows);
  };
  int s = s0;
  if (AV) {
    // K permuted per pair of steps (32 rows at k0): lane q's logical pairs
    // q and q + 4 of step h are physical rows k0 + 8q + 4h + {0,1} and
    // {2,3}, for A and B alike, so a lane's A of both steps is one 16-byte
    // load per row group, and its weight rows are 8 consecutive rows.
    const uint4 *a128 = reinterpret_cast<const uint4 *>(a);
    for (; s + 2 <= s1; s += 2) {
      const int k0 = s * 16;
      uint4 rows[8];
#pragma unroll
      for (int r = 0; r < 8; ++r)
        rows[r] = __ldcs(wt + (size_t)(k0 + 8 * q + r) * ld + col / 8);
      const uint4 zero = make_uint4(0, 0, 0, 0);
      const uint4 alo = lo ? __ldg(a128 + (g * K + k0 + 8 * q) / 8) : zero;
      const uint4 ahi = hi ? __ldg(a128 + ((g + 8) * K + k0 + 8 * q) / 8) : zero;
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const uint32_t a0 = h ? alo.z : alo.x, a2 = h ? alo.w : alo.y;
        const uint32_t a1 = h ? ahi.z : ahi.x, a3 = h ? ahi.w : ahi.y;
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          const unsigned sel = (j & 1) ? 0x7632 : 0x5410;
          uint32_t b0 = __byte_perm(word(rows[4 * h], j / 2), word(rows[4 * h + 1], j / 2), sel);
          uint32_t b1 =
              __byte_perm(word(rows[4 * h + 2], j / 2), word(rows[4 * h + 3], j / 2), sel);
          mma(acc[j], a0, a1, a2, a3, b0, b1);
        }
      }
    }
  }
  for (; s + U <= s1; s += U) {
    uint4 rows[U][4];
#pragma unroll
    for (int u = 0; u < U; ++u) load_rows(rows[u], wt, (s + u) * 16 + 2 * q, ld, col / 8);
#pragma unroll
    for (int u = 0; u < U; ++u) step(rows[u], (s + u) * 16);
  }
  for (; s < s1; ++s) {
    uint4 rows[4];
    load_rows(rows, wt, s * 16 + 2 * q, ld, col / 8);
    step(rows, s * 16);
  }
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) red[(warp * 32 + lane) * 32 + j * 4 + i] = acc[j][i];
  __syncthreads();
  for (int e = threadIdx.x; e < 32 * 32; e += W * 32) {
    const int l = e / 32, j = (e % 32) / 4, i = e % 4;
    const int m = (l >> 2) + (i >= 2 ? 8 : 0);
    const int n = blockIdx.x * 64 + (2 * (l & 3) + (i & 1)) * 8 + j;
    if (m >= M) continue;
    float sum[P];
#pragma unroll
    for (int pp = 0; pp < P; ++pp) {
      sum[pp] = 0.f;
      for (int rr = 0; rr < R; ++rr) sum[pp] += red[((rr * P + pp) * 32 + l) * 32 + (e % 32)];
    }
    if (S > 1) {
      // This block's slice of K: into the workspace; the last block of the
      // column tile to arrive sums the slices (below).
#pragma unroll
      for (int pp = 0; pp < P; ++pp) ws[(((size_t)blockIdx.y * P + pp) * M + m) * N + n] = sum[pp];
    } else {
      float v = sum[0];
      if (P == 2) v = sum[0] / (1.f + __expf(-sum[0])) * sum[1];
      static_cast<__nv_bfloat16 *>(out)[(size_t)m * N + n] = __float2bfloat16(v);
    }
  }
  if (S == 1) return;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(cnt + blockIdx.x, 1u) == (unsigned)S - 1;
  __syncthreads();
  if (!last) return;
  __threadfence();
  for (int e = threadIdx.x; e < M * 64; e += W * 32) {
    const int m = e / 64, n = blockIdx.x * 64 + e % 64;
    float sum[P];
#pragma unroll
    for (int pp = 0; pp < P; ++pp) {
      sum[pp] = 0.f;
      for (int ss = 0; ss < S; ++ss) sum[pp] += __ldcg(ws + (((size_t)ss * P + pp) * M + m) * N + n);
    }
    float v = sum[0];
    if (P == 2) v = sum[0] / (1.f + __expf(-sum[0])) * sum[1];
    static_cast<__nv_bfloat16 *>(out)[(size_t)m * N + n] = __float2bfloat16(v);
  }
  if (threadIdx.x == 0) cnt[blockIdx.x] = 0;
}

template <int W, int U, int P, bool AV>
static int go(const void *a, const void *w0, const void *w1, void *out, int M, int K, int N, int S,
              float *ws, unsigned *cnt, cudaStream_t stream) {
  auto f = regmma<W, U, P, AV>;
  const int smem = W * 32 * 32 * 4;
  static bool set = false;
  if (!set) {
    cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    set = true;
  }
  dim3 grid(N / 64, S);
  f<<<grid, W * 32, smem, stream>>>((const uint16_t *)a, (const uint4 *)w0, (const uint4 *)w1, out,
                                    M, K, N, S, ws, cnt);
  return (int)cudaGetLastError();
}

#define CASE(W, U, P) \
  if (w == W && u == U && p == P) return go<W, U, P, false>(a, w0, w1, out, M, K, N, S, ws, cnt, (cudaStream_t)stream); \
  if (w == W && u == -U && p == P) return go<W, U, P, true>(a, w0, w1, out, M, K, N, S, ws, cnt, (cudaStream_t)stream);

extern "C" int regmma_launch(int w, int u, int p, const void *a, const void *w0, const void *w1,
                             void *out, int M, int K, int N, int S, float *ws, unsigned *cnt,
                             void *stream) {
#define UNROLLS(W, P) CASE(W, 1, P) CASE(W, 2, P) CASE(W, 4, P)
  UNROLLS(4, 1) UNROLLS(8, 1) UNROLLS(16, 1)
  UNROLLS(4, 2) UNROLLS(8, 2) UNROLLS(16, 2)
  return -1;
}

extern "C" int regmma_regs(int w, int u, int p) {
  cudaFuncAttributes at{};
#define REGS(W, U, P) if (w == W && u == U && p == P) cudaFuncGetAttributes(&at, regmma<W, U, P, false>);
  REGS(4, 1, 1) REGS(4, 2, 1) REGS(4, 4, 1) REGS(8, 1, 1) REGS(8, 2, 1) REGS(8, 4, 1)
  REGS(16, 1, 1) REGS(16, 2, 1) REGS(16, 4, 1) REGS(4, 1, 2) REGS(4, 2, 2) REGS(4, 4, 2)
  REGS(8, 1, 2) REGS(8, 2, 2) REGS(8, 4, 2) REGS(16, 1, 2) REGS(16, 2, 2) REGS(16, 4, 2)
  return at.numRegs;
}

// Layout 2: the C warps of a block side by side over C x 64 contiguous
// columns (a DRAM row of C x 128 bytes per weight row), the block's W / C
// warp rows splitting its K range, the grid's y splitting K (f32 atomics
// into `out`, P weights as P x N virtual columns).
template <int W, int C, int U>
__global__ void __launch_bounds__(W * 32) regmma2(const uint16_t *__restrict__ a,
                                                  const uint4 *__restrict__ w0,
                                                  const uint4 *__restrict__ w1, float *out, int M,
                                                  int K, int N, int S) {
  extern __shared__ float red[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int g = lane >> 2, q = lane & 3;
  const int cw = warp % C, kw = warp / C, R = W / C;
  int vcol = (blockIdx.x * C + cw) * 64;
  const uint4 *wt = w0;
  int p = 0;
  if (vcol >= N) { vcol -= N; wt = w1; p = 1; }
  const int ld = N / 8;
  const int col = vcol + g * 8;
  const int steps = K / 16;
  const int idx = blockIdx.y * R + kw, ranges = S * R;
  const int s0 = (long)steps * idx / ranges, s1 = (long)steps * (idx + 1) / ranges;
  float acc[8][4];
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[j][i] = 0.f;
  const uint32_t *a32 = reinterpret_cast<const uint32_t *>(a);
  const bool lo = g < M, hi = g + 8 < M;
  auto step = [&](const uint4 *rows, int k0) {
    uint32_t a0 = lo ? __ldg(a32 + (g * K + k0 + 2 * q) / 2) : 0;
    uint32_t a1 = hi ? __ldg(a32 + ((g + 8) * K + k0 + 2 * q) / 2) : 0;
    uint32_t a2 = lo ? __ldg(a32 + (g * K + k0 + 2 * q + 8) / 2) : 0;
    uint32_t a3 = hi ? __ldg(a32 + ((g + 8) * K + k0 + 2 * q + 8) / 2) : 0;
    mma_step(acc, {a0, a1, a2, a3}, rows);
  };
  int s = s0;
  for (; s + U <= s1; s += U) {
    uint4 rows[U][4];
#pragma unroll
    for (int u = 0; u < U; ++u) load_rows(rows[u], wt, (s + u) * 16 + 2 * q, ld, col / 8);
#pragma unroll
    for (int u = 0; u < U; ++u) step(rows[u], (s + u) * 16);
  }
  for (; s < s1; ++s) {
    uint4 rows[4];
    load_rows(rows, wt, s * 16 + 2 * q, ld, col / 8);
    step(rows, s * 16);
  }
  if (R > 1) {
#pragma unroll
    for (int j = 0; j < 8; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) red[(warp * 32 + lane) * 32 + j * 4 + i] = acc[j][i];
    __syncthreads();
    if (kw != 0) return;
    for (int rr = 1; rr < R; ++rr)
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int i = 0; i < 4; ++i) acc[j][i] += red[((rr * C + cw) * 32 + lane) * 32 + j * 4 + i];
  }
#pragma unroll
  for (int j = 0; j < 8; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = g + (i >= 2 ? 8 : 0);
      const int n = vcol + (2 * q + (i & 1)) * 8 + j;
      if (m < M) atomicAdd(out + ((size_t)p * M + m) * N + n, acc[j][i]);
    }
}

template <int W, int C, int U>
static int go2(const void *a, const void *w0, const void *w1, void *out, int M, int K, int N,
               int P, int S, cudaStream_t stream) {
  auto f = regmma2<W, C, U>;
  const int smem = W * 32 * 32 * 4;
  static bool set = false;
  if (!set) {
    cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    set = true;
  }
  dim3 grid(P * N / 64 / C, S);
  f<<<grid, W * 32, smem, stream>>>((const uint16_t *)a, (const uint4 *)w0, (const uint4 *)w1,
                                    (float *)out, M, K, N, S);
  return (int)cudaGetLastError();
}

extern "C" int regmma2_launch(int w, int c, int u, const void *a, const void *w0, const void *w1,
                              void *out, int M, int K, int N, int P, int S, void *stream) {
#define CASE2(W, C, U) \
  if (w == W && c == C && u == U) return go2<W, C, U>(a, w0, w1, out, M, K, N, P, S, (cudaStream_t)stream);
#define C2U(W, C) CASE2(W, C, 1) CASE2(W, C, 2) CASE2(W, C, 4)
  C2U(4, 1) C2U(4, 2) C2U(4, 4) C2U(8, 2) C2U(8, 4) C2U(8, 8) C2U(16, 4) C2U(16, 8) C2U(16, 16)
  return -1;
}
