// Probe (issue 32): do the latency-bound kernels between the matmuls hide
// part of the next matmul's weight read if they prefetch it into L2?
//
// The Llama-3-8B MLP block at TP 2, one rank, world size 1, as symm runs it
// at decode sizes: RMSNorm kernel -> cuBLAS gate+up (one strided-batched
// GEMM over the two adjacent weights) -> SiLU(gate)*up kernel -> cuBLAS down
// projection as 2 split-K slices (f32) -> a kernel summing the slices with
// the residual. Each variant is captured in one CUDA graph of `reps` layer
// calls and timed over replays. The weights (176 MB) exceed the L2, so each
// call reads them from HBM.
//
// Variants: the norm kernel prefetches the first P bytes of the gate+up
// read order (the first k-rows of both weights) and the SiLU kernel the
// first P bytes of the down slices, by
//   bulk  cp.async.bulk.prefetch.L2 (one instruction per `chunk` bytes),
//   line  prefetch.global.L2 (one per 128-byte line),
// issued by extra blocks of the same kernel (no extra launch), or by a
// separate prefetch kernel on a forked graph branch ("fork").
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o probe bench/l2_prefetch/probe.cu -lcublas
//   ./probe
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                   \
  do {                                                                             \
    cudaError_t err_ = (x);                                                           \
    if (err_ != cudaSuccess) {                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x,               \
                   cudaGetErrorString(err_));                                       \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)
#define CHECK_BLAS(x)                                                              \
  do {                                                                             \
    cublasStatus_t st_ = (x);                                                        \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                              \
      std::fprintf(stderr, "%s:%d %s: status %d\n", __FILE__, __LINE__, #x, int(st_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

constexpr int D = 4096, F = 7168, SLICES = 2;

// One range to prefetch: `bytes` from `base`, split over the prefetch blocks.
struct Prefetch {
  const char *base[2];  // two ranges (gate and up, or the two down slices)
  size_t bytes;         // per range
  int mode;             // 0 none, 1 bulk, 2 line
  int chunk;            // bulk: bytes per instruction
};

__device__ void issue_prefetch(const Prefetch &p, int block, int blocks) {
  if (p.mode == 0 || p.bytes == 0) return;
  for (int r = 0; r < 2; ++r) {
    size_t per = (p.bytes + blocks - 1) / blocks;
    per = (per + 127) / 128 * 128;
    size_t begin = size_t(block) * per, end = begin + per < p.bytes ? begin + per : p.bytes;
    if (p.mode == 1) {
      for (size_t off = begin + size_t(threadIdx.x) * p.chunk; off < end;
           off += size_t(blockDim.x) * p.chunk) {
        unsigned n = unsigned(end - off < size_t(p.chunk) ? end - off : size_t(p.chunk));
        asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p.base[r] + off), "r"(n)
                     : "memory");
      }
    } else {
      for (size_t off = begin + size_t(threadIdx.x) * 128; off < end;
           off += size_t(blockDim.x) * 128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(p.base[r] + off));
    }
  }
}

// RMSNorm: one block of 256 threads per row; blocks >= rows prefetch.
__global__ void norm(const __nv_bfloat16 *x, const __nv_bfloat16 *w, __nv_bfloat16 *xn, int rows,
                     Prefetch p) {
  if (int(blockIdx.x) >= rows) {
    issue_prefetch(p, blockIdx.x - rows, gridDim.x - rows);
    return;
  }
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
  float t = 0.f;
  for (int i = 0; i < 8; ++i) t += part[i];
  float inv = rsqrtf(t / D + 1e-5f);
  for (int i = threadIdx.x; i < D; i += blockDim.x)
    xn[size_t(blockIdx.x) * D + i] =
        __float2bfloat16(__bfloat162float(row[i]) * inv * __bfloat162float(w[i]));
}

// act = SiLU(gate) * up over rows x F; `work` blocks of 256, the rest prefetch.
__global__ void silu_mul(const __nv_bfloat16 *gate, const __nv_bfloat16 *up, __nv_bfloat16 *act,
                         size_t n, int work, Prefetch p) {
  if (int(blockIdx.x) >= work) {
    issue_prefetch(p, blockIdx.x - work, gridDim.x - work);
    return;
  }
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(work) * blockDim.x) {
    float g = __bfloat162float(gate[i]), u = __bfloat162float(up[i]);
    act[i] = __float2bfloat16(g / (1.f + __expf(-g)) * u);
  }
}

// out = sum of slices + x.
__global__ void finish(const float *slices, const __nv_bfloat16 *x, __nv_bfloat16 *out,
                       size_t n) {
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x) {
    float s = __bfloat162float(x[i]);
    for (int k = 0; k < SLICES; ++k) s += slices[k * n + i];
    out[i] = __float2bfloat16(s);
  }
}

__global__ void prefetch_only(Prefetch p) { issue_prefetch(p, blockIdx.x, gridDim.x); }

struct Layer {
  int m;
  __nv_bfloat16 *x, *nw, *xn, *wgu, *gu, *act, *wd, *out;
  float *slices;
};

static void matmuls_gate_up(cublasHandle_t h, const Layer &l) {
  float one = 1.f, zero = 0.f;
  // Row-major C[m,F] = A[m,D] B[D,F]  ==  column-major C^T = B^T A^T.
  CHECK_BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, F, l.m, D, &one, l.wgu,
                                        CUDA_R_16BF, F, size_t(D) * F, l.xn, CUDA_R_16BF, D, 0,
                                        &zero, l.gu, CUDA_R_16BF, F, size_t(l.m) * F, 2,
                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

static void matmul_down(cublasHandle_t h, const Layer &l) {
  float one = 1.f, zero = 0.f;
  int ks = F / SLICES;
  CHECK_BLAS(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, D, l.m, ks, &one, l.wd,
                                        CUDA_R_16BF, D, size_t(ks) * D, l.act, CUDA_R_16BF, F, ks,
                                        &zero, l.slices, CUDA_R_32F, D, size_t(l.m) * D, SLICES,
                                        CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

struct Variant {
  const char *name;
  int mode;        // 0 none, 1 bulk, 2 line
  size_t bytes;    // per range
  int blocks;      // prefetch blocks
  int chunk;
  bool fork;       // separate kernel on a forked branch
};

static void layer(cublasHandle_t h, cudaStream_t s, cudaStream_t side, cudaEvent_t *ev,
                  const Layer &l, const Variant &v) {
  Prefetch gu{{(const char *)l.wgu, (const char *)(l.wgu + size_t(D) * F)}, v.bytes, v.mode,
              v.chunk};
  Prefetch dn{{(const char *)l.wd, (const char *)(l.wd + size_t(F / SLICES) * D)}, v.bytes,
               v.mode, v.chunk};
  Prefetch none{{nullptr, nullptr}, 0, 0, 0};
  int pb = v.fork ? 0 : v.blocks;
  if (v.fork && v.mode) {
    CHECK(cudaEventRecord(ev[0], s));
    CHECK(cudaStreamWaitEvent(side, ev[0]));
    prefetch_only<<<v.blocks, 256, 0, side>>>(gu);
    CHECK(cudaEventRecord(ev[1], side));
  }
  norm<<<l.m + pb, 256, 0, s>>>(l.x, l.nw, l.xn, l.m, v.fork ? none : gu);
  if (v.fork && v.mode) CHECK(cudaStreamWaitEvent(s, ev[1]));
  matmuls_gate_up(h, l);
  size_t n = size_t(l.m) * F;
  int work = int(std::min<size_t>((n + 255) / 256, 264));
  if (v.fork && v.mode) {
    CHECK(cudaEventRecord(ev[2], s));
    CHECK(cudaStreamWaitEvent(side, ev[2]));
    prefetch_only<<<v.blocks, 256, 0, side>>>(dn);
    CHECK(cudaEventRecord(ev[3], side));
  }
  silu_mul<<<work + pb, 256, 0, s>>>(l.gu, l.gu + n, l.act, n, work, v.fork ? none : dn);
  if (v.fork && v.mode) CHECK(cudaStreamWaitEvent(s, ev[3]));
  matmul_down(h, l);
  size_t o = size_t(l.m) * D;
  finish<<<int(std::min<size_t>((o + 255) / 256, 264)), 256, 0, s>>>(l.slices, l.x, l.out, o);
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

int main(int argc, char **argv) {
  int reps = 20, replays = 30;
  std::vector<int> tokens = {1, 16, 128};
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  std::printf("device %s, %d SMs, L2 %d MB\n", prop.name, prop.multiProcessorCount,
              prop.l2CacheSize >> 20);
  cublasHandle_t h;
  CHECK_BLAS(cublasCreate(&h));
  cudaStream_t s, side;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CHECK_BLAS(cublasSetStream(h, s));
  void *ws;
  CHECK(cudaMalloc(&ws, 32 << 20));
  CHECK_BLAS(cublasSetWorkspace(h, ws, 32 << 20));
  cudaEvent_t ev[4], t0, t1;
  for (auto &e : ev) CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&t0));
  CHECK(cudaEventCreate(&t1));

  int mmax = 128;
  Layer l{};
  CHECK(cudaMalloc(&l.x, size_t(mmax) * D * 2));
  CHECK(cudaMalloc(&l.nw, size_t(D) * 2));
  CHECK(cudaMalloc(&l.xn, size_t(mmax) * D * 2));
  CHECK(cudaMalloc(&l.wgu, size_t(2) * D * F * 2));
  CHECK(cudaMalloc(&l.gu, size_t(2) * mmax * F * 2));
  CHECK(cudaMalloc(&l.act, size_t(mmax) * F * 2));
  CHECK(cudaMalloc(&l.wd, size_t(F) * D * 2));
  CHECK(cudaMalloc(&l.out, size_t(mmax) * D * 2));
  CHECK(cudaMalloc(&l.slices, size_t(SLICES) * mmax * D * 4));
  fill<<<1024, 256>>>(l.x, size_t(mmax) * D, 1, 2.f);
  fill<<<1024, 256>>>(l.nw, D, 2, 2.f);
  fill<<<1024, 256>>>(l.wgu, size_t(2) * D * F, 3, 0.05f);
  fill<<<1024, 256>>>(l.wd, size_t(F) * D, 4, 0.05f);
  CHECK(cudaDeviceSynchronize());

  const size_t MB = 1 << 20;
  std::vector<Variant> variants = {{"none", 0, 0, 0, 0, false}};
  for (size_t mb : {2, 4, 6, 8, 12})
    for (int blocks : {32, 132}) variants.push_back({"bulk", 1, mb * MB, blocks, 16384, false});
  for (size_t mb : {4, 8}) variants.push_back({"line", 2, mb * MB, 132, 0, false});
  for (size_t mb : {4, 8}) variants.push_back({"fork", 1, mb * MB, 132, 16384, true});
  variants.push_back({"none", 0, 0, 0, 0, false});

  std::vector<__nv_bfloat16> ref, got;
  for (int m : tokens) {
    l.m = m;
    for (const Variant &v : variants) {
      cudaGraph_t g;
      cudaGraphExec_t ge;
      CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
      for (int r = 0; r < reps; ++r) layer(h, s, side, ev, l, v);
      CHECK(cudaStreamEndCapture(s, &g));
      CHECK(cudaGraphInstantiate(&ge, g, 0));
      CHECK(cudaGraphLaunch(ge, s));
      CHECK(cudaStreamSynchronize(s));
      std::vector<float> times;
      for (int i = 0; i < replays; ++i) {
        CHECK(cudaEventRecord(t0, s));
        CHECK(cudaGraphLaunch(ge, s));
        CHECK(cudaEventRecord(t1, s));
        CHECK(cudaEventSynchronize(t1));
        float ms;
        CHECK(cudaEventElapsedTime(&ms, t0, t1));
        times.push_back(ms * 1000.f / reps);
      }
      std::sort(times.begin(), times.end());
      got.resize(size_t(m) * D);
      CHECK(cudaMemcpy(got.data(), l.out, got.size() * 2, cudaMemcpyDeviceToHost));
      if (v.mode == 0 && ref.size() != got.size()) ref = got;
      double diff = 0;
      for (size_t i = 0; i < got.size(); ++i)
        diff = std::max(diff, double(std::abs(__bfloat162float(got[i]) - __bfloat162float(ref[i]))));
      std::printf("M=%-4d %-5s P=%2zu MB x2 blocks=%3d  median %7.2f us  min %7.2f us  maxdiff %g\n",
                  m, v.name, v.bytes / MB, v.blocks, times[times.size() / 2], times[0], diff);
      CHECK(cudaGraphExecDestroy(ge));
      CHECK(cudaGraphDestroy(g));
    }
    ref.clear();
  }
  return 0;
}
