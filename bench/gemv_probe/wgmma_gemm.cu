// Probe (issue 32, session 16): the skinny matmul on Hopper's warpgroup
// tensor cores (`wgmma`), with A and B swapped: the weight tile is wgmma's
// A operand (64 weight columns as its M, read M-major from the TMA's
// 128-byte-swizzled tile) and the call's rows of `a` are its B operand
// (T = 16..128 rows as its N, K-major). The question: at 16 to 128 rows,
// does a TMA ring feeding `wgmma` read the Llama-3-8B MLP weights faster
// than cuBLAS (the M = 128 target needs the block's matmuls near 3.5 TB/s)
// and than the register-streaming `mma16` GEMV at 16 rows? Not shipped:
// built on the device with nvcc, driven by wgmma_probe.py beside cuBLAS.
//
// Block (x, y): CG consumer warpgroups, each 64 columns of each of the P
// weights (a pair's gate and up at the same columns, so SiLU(gate)·up is
// applied in registers), K slice y of S; one producer warp after them.
// A stage holds BK rows of each weight tile (a TMA box of 64 columns x BK
// rows) and BK columns of `a` (boxes of 64 columns x T rows, rows past M
// zero-filled by the TMA). With S > 1 each block writes f32 partials to a
// workspace and the last block of a column tile sums them; with RAW the
// partials are the result (as the compiler's split-K slices, which the
// all-reduce sums). With a cluster of CL blocks along x (adjacent column
// tiles), each block loads 1/CL of a stage's rows of `a` and multicasts it
// to the cluster: `a` crosses L2 once per cluster, not once per block.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cstdint>
#include <cstdio>
#include <map>
#include <tuple>

#include "mbarrier.cuh"
#include "tma_2d.cuh"
__device__ __forceinline__ void tma_2d_multicast(uint32_t dst, const CUtensorMap *map, int x, int y,
                                                 uint64_t *bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
      "l"(map), "r"(x), "r"(y), "r"(smem(bar)), "h"(mask)
      : "memory");
}
// Arrive on the mbarrier at `bar`'s place in cluster block `rank`.
// The .release.cluster here costs an ERRBAR per arrive: the compiler's
// clustered GEMV ran twice as long with it as with the default .cta
// (bench/results/2026-11-29-cluster-multicast-h200.md), so this probe's
// cluster figures (2026-11-27-wgmma-gemv-h200.md) carry that cost too.
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t *bar, unsigned rank) {
  asm volatile(
      "{\n .reg .b32 r;\n mapa.shared::cluster.u32 r, %0, %1;\n"
      " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [r];\n}" ::"r"(smem(bar)),
      "r"(rank)
      : "memory");
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
// A shared-memory matrix descriptor, 128-byte swizzle. Both byte offsets
// are 1024 (eight 128-byte rows): for the weight (M-major, one 64-column
// atom along M) the only stride used is the one between groups of eight K
// rows; for `a` (K-major) the one between groups of eight rows of N.
__device__ __forceinline__ uint64_t desc(uint32_t addr) {
  return (uint64_t)((addr & 0x3FFFF) >> 4) | ((uint64_t)(1024 >> 4) << 16) |
         ((uint64_t)(1024 >> 4) << 32) | ((uint64_t)1 << 62);
}
__device__ __forceinline__ void wg_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wg_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
template <int N> __device__ __forceinline__ void wg_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void wgmma_n16(float *d, uint64_t da, uint64_t db, int scale) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %10, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, p, 1, 1, 1, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
      : "l"(da), "l"(db), "r"(scale));
}
__device__ __forceinline__ void wgmma_n32(float *d, uint64_t da, uint64_t db, int scale) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, p, 1, 1, 1, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "l"(da), "l"(db), "r"(scale));
}
__device__ __forceinline__ void wgmma_n64(float *d, uint64_t da, uint64_t db, int scale) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(scale));
}
__device__ __forceinline__ void wgmma_n128(float *d, uint64_t da, uint64_t db, int scale) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 1, 0;\n}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
      : "l"(da), "l"(db), "r"(scale));
}

template <int T> __device__ __forceinline__ void wgmma(float *d, uint64_t da, uint64_t db) {
  if constexpr (T == 16) wgmma_n16(d, da, db, 1);
  else if constexpr (T == 32) wgmma_n32(d, da, db, 1);
  else if constexpr (T == 64) wgmma_n64(d, da, db, 1);
  else wgmma_n128(d, da, db, 1);
}
// The accumulators of a wgmma between calls: the compiler must not move
// its register reads across the asynchronous op.
template <int R> __device__ __forceinline__ void fence_regs(float *d) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

template <int STAGES, int BK, int P, int CG, int T, int CL>
__global__ void __launch_bounds__(CG * 128 + 32, 1)
    wgmma_gemm(const __grid_constant__ CUtensorMap w0, const __grid_constant__ CUtensorMap w1,
               const __grid_constant__ CUtensorMap amap, __nv_bfloat16 *out, int M, int K, int N,
               int S, float *ws, unsigned *cnt, bool HINT, bool RAW, int DIAG) {
  constexpr int W_TILE = BK * 128;      // one weight's 64 columns x BK rows
  constexpr int A_TILE = T * 128;       // `a`'s T rows x 64 columns
  constexpr int STAGE = P * CG * W_TILE + (BK / 64) * A_TILE;
  constexpr int R = T / 2;              // accumulators per thread per weight
  extern __shared__ __align__(1024) unsigned char raw[];
  unsigned char *base =
      reinterpret_cast<unsigned char *>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  __shared__ uint64_t full[STAGES], empty[STAGES];
  __shared__ bool last;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int tiles = K / BK;
  const int t0 = (long)tiles * blockIdx.y / S, t1 = (long)tiles * (blockIdx.y + 1) / S;
  const int iters = t1 - t0;
  const int col0 = blockIdx.x * 64 * CG;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 1);
      mbar_init(&empty[s], CG * 4 * CL);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const unsigned rank = CL > 1 ? cluster_rank() : 0;
  if constexpr (CL > 1) cluster_sync();
  if (warp == CG * 4) {
    if (lane == 0) {
      uint64_t policy = 0;
      if (HINT) asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
      for (int it = 0; it < iters; ++it) {
        const int s = it % STAGES;
        if (it >= STAGES) mbar_wait(&empty[s], ((it / STAGES) - 1) & 1);
        const uint32_t st = smem(base + s * STAGE);
        // DIAG 1 (timing only): `a` loaded in the first round of stages
        // and never again, to price its traffic.
        const bool load_a = DIAG != 1 || it < STAGES;
        mbar_expect_tx(&full[s], load_a ? STAGE : P * CG * W_TILE);
        const int k0 = (t0 + it) * BK;
        for (int g = 0; g < CG; ++g) {
          tma_2d(st + g * W_TILE, &w0, col0 + 64 * g, k0, &full[s], policy, HINT);
          if (P == 2) tma_2d(st + (CG + g) * W_TILE, &w1, col0 + 64 * g, k0, &full[s], policy, HINT);
        }
        for (int b = 0; b < BK / 64 && load_a; ++b) {
          if constexpr (CL == 1)
            tma_2d(st + P * CG * W_TILE + b * A_TILE, &amap, k0 + 64 * b, 0, &full[s], 0, false);
          else
            tma_2d_multicast(st + P * CG * W_TILE + b * A_TILE + rank * (A_TILE / CL), &amap,
                             k0 + 64 * b, rank * (T / CL), &full[s], (1 << CL) - 1);
        }
      }
    }
  } else {
  const int g = warp >> 2;  // this thread's warpgroup
  float acc[P][R];
#pragma unroll
  for (int p = 0; p < P; ++p)
#pragma unroll
    for (int i = 0; i < R; ++i) acc[p][i] = 0.f;
  for (int it = 0; it < iters; ++it) {
    const int s = it % STAGES;
    mbar_wait(&full[s], (it / STAGES) & 1);
    const uint32_t st = smem(base + s * STAGE);
    wg_fence();
    // DIAG 2 (timing only): no multiplies, to price the stream alone.
    if (DIAG != 2) {
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk) {
        const uint64_t db = desc(st + P * CG * W_TILE + (kk / 4) * A_TILE + (kk % 4) * 32);
#pragma unroll
        for (int p = 0; p < P; ++p) wgmma<T>(acc[p], desc(st + (p * CG + g) * W_TILE + kk * 2048), db);
      }
    }
    wg_commit();
#pragma unroll
    for (int p = 0; p < P; ++p) fence_regs<R>(acc[p]);
    wg_wait<1>();
    if (it > 0 && lane == 0) {
      if constexpr (CL == 1) mbar_arrive(&empty[(it - 1) % STAGES]);
      else
        for (unsigned r = 0; r < CL; ++r) mbar_arrive_cluster(&empty[(it - 1) % STAGES], r);
    }
  }
  wg_wait<0>();
#pragma unroll
  for (int p = 0; p < P; ++p) fence_regs<R>(acc[p]);
  // D (64 weight columns x T rows): thread (w, l) holds column
  // 16 w + l / 4 (+ 8) of rows 8 (j / 4) + 2 (l % 4) + (j % 2).
  const int wl = warp & 3;
#pragma unroll
  for (int j = 0; j < R; ++j) {
    const int n = col0 + 64 * g + 16 * wl + (lane >> 2) + ((j >> 1) & 1) * 8;
    const int m = 8 * (j >> 2) + 2 * (lane & 3) + (j & 1);
    if (m >= M) continue;
    if (S > 1 || RAW) {
#pragma unroll
      for (int p = 0; p < P; ++p) ws[(((size_t)blockIdx.y * P + p) * M + m) * N + n] = acc[p][j];
    } else {
      float v = acc[0][j];
      if (P == 2) v = v / (1.f + __expf(-v)) * acc[P - 1][j];
      out[(size_t)m * N + n] = __float2bfloat16(v);
    }
  }
  }
  // No block leaves while its cluster may still write into its memory or
  // arrive on its barriers.
  if constexpr (CL > 1) cluster_sync();
  if (warp == CG * 4 || S == 1 || RAW) return;
  __threadfence();
  asm volatile("bar.sync 1, %0;" ::"r"(CG * 128));
  if (threadIdx.x == 0) last = atomicAdd(cnt + blockIdx.x, 1u) == (unsigned)S - 1;
  asm volatile("bar.sync 1, %0;" ::"r"(CG * 128));
  if (!last) return;
  __threadfence();
  for (int e = threadIdx.x; e < M * 64 * CG; e += CG * 128) {
    const int m = e / (64 * CG), n = col0 + e % (64 * CG);
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

template <int STAGES, int BK, int P, int CG, int T, int CL>
static int go(const void *a, const void *w0, const void *w1, void *out, int M, int K, int N, int S,
              float *ws, unsigned *cnt, bool hint, bool raw, int diag, cudaStream_t stream) {
  auto f = wgmma_gemm<STAGES, BK, P, CG, T, CL>;
  const int smem_bytes = STAGES * (P * CG * BK * 128 + (BK / 64) * T * 128) + 1024;
  if (smem_bytes > 227 * 1024) return -2;
  if (N % (64 * CG * CL) != 0 || K % BK != 0 || M > T || T / CL < 8) return -3;
  cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  CUtensorMap m0 = map_of(w0, K, N, BK), m1 = map_of(w1, K, N, BK), ma = map_of(a, M, K, T);
  CUtensorMap ma_part = map_of(a, M, K, T / CL);
  cudaLaunchConfig_t config = {};
  config.gridDim = dim3(N / (64 * CG), S);
  config.blockDim = dim3(CG * 128 + 32);
  config.dynamicSmemBytes = smem_bytes;
  config.stream = stream;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CL;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  cudaLaunchKernelEx(&config, f, m0, m1, CL == 1 ? ma : ma_part, (__nv_bfloat16 *)out, M, K, N, S,
                     ws, cnt, hint, raw, diag);
  return (int)cudaGetLastError();
}

// Built once per (P, T) (-DSEL_P, -DSEL_T), so that nvcc's instantiations
// compile in parallel.
#define CASE(ST, BK, CG, CL)                                                                      \
  if (st == ST && bk == BK && cg == CG && cl == CL)                                               \
    return go<ST, BK, SEL_P, CG, SEL_T, CL>(a, w0, w1, out, M, K, N, S, ws, cnt, hint != 0,        \
                                            raw != 0, diag, (cudaStream_t)stream);
#define BKS(ST)                                                                                   \
  CASE(ST, 64, 1, 1) CASE(ST, 64, 2, 1) CASE(ST, 128, 1, 1) CASE(ST, 128, 2, 1)                   \
  CASE(ST, 64, 1, 2) CASE(ST, 128, 1, 2) CASE(ST, 64, 1, 4) CASE(ST, 128, 1, 4)

extern "C" int wgmma_launch(int st, int bk, int cg, int cl, int hint, int raw, int diag, const void *a,
                            const void *w0, const void *w1, void *out, int M, int K, int N, int S,
                            float *ws, unsigned *cnt, void *stream) {
  BKS(3) BKS(4) BKS(6) BKS(8)
  return -1;
}
