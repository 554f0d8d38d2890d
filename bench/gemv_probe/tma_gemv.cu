// Probe (issue 32, session 8): the skinny matmul with its weight streamed
// by the TMA into a ring of shared-memory stages (mbarrier full/empty
// pairs, one producer thread), read back by ldmatrix(.trans) with the
// 128-byte swizzle and multiplied by mma.sync m16n8k16. The question: does
// a bulk-copy pipeline, whose bytes in flight do not cost registers, read
// the weight faster than the register-streaming `mma16` kernel (3.4 TB/s
// for gate+up at 16 rows) and as fast as cuBLAS (3.85)? Not shipped: built
// on the device with nvcc and driven by tma_probe.py beside cuBLAS.
//
// Block (x, y): 64 columns of each of the P weights (a pair's gate and up
// at the same columns), K slice y of S. CW consumer warps split the 64
// columns (64 / CW each, both weights, so a lane holds gate and up of the
// same outputs and applies SiLU(gate)·up in registers); warp CW is the
// producer. A stage holds BK rows of each weight's tile and the BK columns
// of `a` (16 rows, zero past M), each a TMA box of 128-byte rows.
// With S > 1 each block writes f32 partials to a workspace and the last
// block of a column tile (an arrival counter) sums them and applies the
// epilogue.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>

#include "mbarrier.cuh"
__device__ __forceinline__ void tma_2d(void *dst, const CUtensorMap *map, int x, int y,
                                       uint64_t *bar, uint64_t policy, bool hint) {
  if (hint)
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint"
        " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem(dst)),
        "l"(map), "r"(x), "r"(y), "r"(smem(bar)), "l"(policy)
        : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem(dst)),
        "l"(map), "r"(x), "r"(y), "r"(smem(bar))
        : "memory");
}
__device__ __forceinline__ void ldsm4(uint32_t *r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void ldsm4t(uint32_t *r, uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr));
}
__device__ __forceinline__ void mma(float *d, const uint32_t *a, uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
// Byte offset of 16-byte chunk `chunk` of 128-byte row `row` in a tile
// written by the TMA with the 128-byte swizzle (tile 1024-byte aligned).
__device__ __forceinline__ uint32_t swz(int row, int chunk) {
  return row * 128 + ((chunk ^ (row & 7)) << 4);
}

template <int STAGES, int BK, int P, int CW>
__global__ void __launch_bounds__((CW + 1) * 32)
    tma_gemv(const __grid_constant__ CUtensorMap w0, const __grid_constant__ CUtensorMap w1,
             const __grid_constant__ CUtensorMap amap, __nv_bfloat16 *out, int M, int K, int N,
             int S, float *ws, unsigned *cnt, bool HINT) {
  constexpr int W_BYTES = BK * 128;           // one weight's tile of a stage
  constexpr int A_BYTES = (BK / 64) * 2048;   // `a`'s 16 rows x BK columns
  constexpr int STAGE = P * W_BYTES + A_BYTES;
  constexpr int NB = 64 / CW / 8;             // n-blocks of 8 per warp per weight
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char *base =
      reinterpret_cast<unsigned char *>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ uint64_t full[STAGES], empty[STAGES];
  __shared__ bool last;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int tiles = K / BK;
  const int t0 = (long)tiles * blockIdx.y / S, t1 = (long)tiles * (blockIdx.y + 1) / S;
  const int iters = t1 - t0;
  const int col0 = blockIdx.x * 64;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], CW);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  if (warp == CW) {
    if (lane == 0) {
      uint64_t policy = 0;
      if (HINT) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
      for (int it = 0; it < iters; ++it) {
        const int s = it % STAGES;
        if (it >= STAGES) mbar_wait(&empty[s], ((it / STAGES) - 1) & 1);
        unsigned char *st = base + s * STAGE;
        mbar_expect_tx(&full[s], STAGE);
        const int k0 = (t0 + it) * BK;
        tma_2d(st, &w0, col0, k0, &full[s], policy, HINT);
        if (P == 2) tma_2d(st + W_BYTES, &w1, col0, k0, &full[s], policy, HINT);
        for (int b = 0; b < BK / 64; ++b)
          tma_2d(st + P * W_BYTES + b * 2048, &amap, k0 + 64 * b, 0, &full[s], 0, false);
      }
    }
    return;
  }
  float acc[P][NB][4];
#pragma unroll
  for (int p = 0; p < P; ++p)
#pragma unroll
    for (int j = 0; j < NB; ++j)
#pragma unroll
      for (int i = 0; i < 4; ++i) acc[p][j][i] = 0.f;
  const int mi = lane >> 3, r8 = lane & 7;
  const int n0 = warp * (64 / CW);
  for (int it = 0; it < iters; ++it) {
    const int s = it % STAGES;
    mbar_wait(&full[s], (it / STAGES) & 1);
    const uint32_t st = smem(base + s * STAGE);
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk) {
      uint32_t a[4];
      {
        const int row = (mi & 1) * 8 + r8;
        const int kcol = kk * 16 + (mi >> 1) * 8;
        ldsm4(a, st + P * W_BYTES + (kcol / 64) * 2048 + swz(row, (kcol % 64) / 8));
      }
#pragma unroll
      for (int p = 0; p < P; ++p)
#pragma unroll
        for (int j = 0; j < NB; j += 2) {
          uint32_t b[4];
          const int krow = kk * 16 + (mi & 1) * 8 + r8;
          const int ncol = n0 + j * 8 + (mi >> 1) * 8;
          ldsm4t(b, st + p * W_BYTES + swz(krow, ncol / 8));
          mma(acc[p][j], a, b[0], b[1]);
          mma(acc[p][j + 1], a, b[2], b[3]);
        }
    }
    __syncwarp();
    if (lane == 0) mbar_arrive(&empty[s]);
  }
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int j = 0; j < NB; ++j)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int m = g + (i >= 2 ? 8 : 0);
      const int n = col0 + n0 + j * 8 + 2 * t + (i & 1);
      if (m >= M) continue;
      if (S > 1) {
#pragma unroll
        for (int p = 0; p < P; ++p) ws[(((size_t)blockIdx.y * P + p) * M + m) * N + n] = acc[p][j][i];
      } else {
        float v = acc[0][j][i];
        if (P == 2) v = v / (1.f + __expf(-v)) * acc[P - 1][j][i];
        out[(size_t)m * N + n] = __float2bfloat16(v);
      }
    }
  if (S == 1) return;
  __threadfence();
  asm volatile("bar.sync 1, %0;" ::"r"(CW * 32));
  if (threadIdx.x == 0) last = atomicAdd(cnt + blockIdx.x, 1u) == (unsigned)S - 1;
  asm volatile("bar.sync 1, %0;" ::"r"(CW * 32));
  if (!last) return;
  __threadfence();
  for (int e = threadIdx.x; e < M * 64; e += CW * 32) {
    const int m = e / 64, n = col0 + e % 64;
    float sum[P];
#pragma unroll
    for (int p = 0; p < P; ++p) {
      sum[p] = 0.f;
      for (int ss = 0; ss < S; ++ss) sum[p] += __ldcg(ws + (((size_t)ss * P + p) * M + m) * N + n);
    }
    float v = sum[0];
    if (P == 2) v = v / (1.f + __expf(-v)) * sum[P - 1];
    out[(size_t)m * N + n] = __float2bfloat16(v);
  }
  if (threadIdx.x == 0) cnt[blockIdx.x] = 0;
}

// Tensor maps, cached by (pointer, rows, columns, box rows).
static CUtensorMap map_of(const void *ptr, int rows, int cols, int box_rows) {
  static std::map<std::tuple<const void *, int, int, int>, CUtensorMap> cache;
  auto key = std::make_tuple(ptr, rows, cols, box_rows);
  auto it = cache.find(key);
  if (it != cache.end()) return it->second;
  CUtensorMap m;
  cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
  cuuint64_t strides[1] = {(cuuint64_t)cols * 2};
  cuuint32_t box[2] = {64, (cuuint32_t)box_rows};
  cuuint32_t elem[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void *>(ptr),
                                      dims, strides, box, elem, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", (int)r);
  cache[key] = m;
  return m;
}

template <int STAGES, int BK, int P, int CW>
static int go(const void *a, const void *w0, const void *w1, void *out, int M, int K, int N, int S,
              float *ws, unsigned *cnt, bool hint, cudaStream_t stream) {
  auto f = tma_gemv<STAGES, BK, P, CW>;
  const int smem_bytes = STAGES * (P * BK * 128 + (BK / 64) * 2048) + 1024;
  if (smem_bytes > 227 * 1024) return -2;
  cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  CUtensorMap m0 = map_of(w0, K, N, BK), m1 = map_of(w1, K, N, BK), ma = map_of(a, 16, K, 16);
  dim3 grid(N / 64, S);
  f<<<grid, (CW + 1) * 32, smem_bytes, stream>>>(m0, m1, ma, (__nv_bfloat16 *)out, M, K, N, S, ws,
                                                  cnt, hint);
  return (int)cudaGetLastError();
}

#define CASE(ST, BK, P, CW)                                                                       \
  if (st == ST && bk == BK && p == P && cw == CW)                                                 \
    return go<ST, BK, P, CW>(a, w0, w1, out, M, K, N, S, ws, cnt, hint != 0, (cudaStream_t)stream);
#define CWS(ST, BK, P) CASE(ST, BK, P, 2) CASE(ST, BK, P, 4)
#define BKS(ST, P) CWS(ST, 64, P) CWS(ST, 128, P) CWS(ST, 256, P)

extern "C" int tma_launch(int st, int bk, int p, int cw, int hint, const void *a, const void *w0,
                          const void *w1, void *out, int M, int K, int N, int S, float *ws,
                          unsigned *cnt, void *stream) {
  BKS(4, 1) BKS(6, 1) BKS(8, 1) BKS(12, 1)
  BKS(3, 2) BKS(4, 2) BKS(6, 2) BKS(8, 2)
  return -1;
}
