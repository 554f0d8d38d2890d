// Probe (issue 32): does cuBLAS's decode GEMM hit weight lines that are
// already in L2? Flush the L2, read (ldg) or prefetch a region of the
// weights, then time the GEMM alone with events.
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o warm bench/l2_prefetch/warm.cu -lcublas
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>
#define CHECK(x) do { cudaError_t err_ = (x); if (err_ != cudaSuccess) { std::printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(err_)); std::exit(1);} } while (0)
constexpr int D = 4096, F = 7168;
__global__ void readk(const int4 *p, size_t n, unsigned *sink) {
  unsigned acc = 0;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    int4 v = p[i]; acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678) *sink = acc;
}
__global__ void pref(const char *p, size_t n, int chunk) {
  for (size_t off = (size_t(blockIdx.x) * blockDim.x + threadIdx.x) * chunk; off < n; off += size_t(gridDim.x) * blockDim.x * chunk) {
    unsigned m = unsigned(n - off < size_t(chunk) ? n - off : size_t(chunk));
    asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(p + off), "r"(m) : "memory");
  }
}
int main() {
  cublasHandle_t h; cublasCreate(&h);
  cudaStream_t s; CHECK(cudaStreamCreate(&s)); cublasSetStream(h, s);
  void *ws; CHECK(cudaMalloc(&ws, 32 << 20)); cublasSetWorkspace(h, ws, 32 << 20);
  __nv_bfloat16 *w, *x, *y; char *junk; unsigned *sink;
  CHECK(cudaMalloc(&w, size_t(2) * D * F * 2)); CHECK(cudaMalloc(&x, 128 * D * 2)); CHECK(cudaMalloc(&y, 2 * 128 * F * 2));
  CHECK(cudaMalloc(&junk, size_t(256) << 20)); CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMemset(w, 0, size_t(2) * D * F * 2)); CHECK(cudaMemset(x, 0, 128 * D * 2)); CHECK(cudaMemset(junk, 1, size_t(256) << 20));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  float one = 1, zero = 0;
  const size_t MB = 1 << 20, wbytes = size_t(D) * F * 2;
  for (int m : {1, 16}) {
    // mode: 0 none, 1 read first X of each weight, 2 read last X, 3 prefetch first X, 4 prefetch first X then sleep via read of junk? (skip)
    for (int mode = 0; mode < 4; ++mode)
      for (size_t x_mb : {4, 8, 16, 24}) {
        if (mode == 0 && x_mb != 4) continue;
        std::vector<float> t;
        for (int it = 0; it < 40; ++it) {
          readk<<<1056, 512, 0, s>>>((const int4 *)junk, (size_t(256) << 20) / 16, sink);
          size_t xb = x_mb * MB;
          for (int r = 0; r < 2; ++r) {
            const char *base = (const char *)w + r * wbytes;
            if (mode == 1) readk<<<1056, 512, 0, s>>>((const int4 *)base, xb / 16, sink);
            if (mode == 2) readk<<<1056, 512, 0, s>>>((const int4 *)(base + wbytes - xb), xb / 16, sink);
            if (mode == 3) pref<<<132, 256, 0, s>>>(base, xb, 16384);
          }
          if (mode == 3) readk<<<1, 32, 0, s>>>((const int4 *)junk, 1024, sink); // small delay
          CHECK(cudaEventRecord(a, s));
          cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, F, m, D, &one, w, CUDA_R_16BF, F, size_t(D) * F, x, CUDA_R_16BF, D, 0, &zero, y, CUDA_R_16BF, F, size_t(m) * F, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
          CHECK(cudaEventRecord(b, s));
          CHECK(cudaEventSynchronize(b));
          float ms; cudaEventElapsedTime(&ms, a, b); if (it >= 5) t.push_back(ms * 1000);
        }
        std::sort(t.begin(), t.end());
        std::printf("M=%-3d mode=%d (%s) X=%2zu MB per weight: gemm median %.2f us min %.2f\n", m, mode,
                    mode == 0 ? "cold" : mode == 1 ? "read first X" : mode == 2 ? "read last X" : "prefetch first X", x_mb, t[t.size() / 2], t[0]);
      }
  }
  // Down: split-K 2 slices f32 out
  return 0;
}
