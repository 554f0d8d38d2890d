// Probe (not shipped, not yet run): could the all-reduce absorb the down
// projection's split-K reduction? At decode sizes cuBLAS runs the Llama MLP's
// down GEMM (M x 7168 @ 7168 x 4096, bf16) as a split-K kernel plus
// cublasLt::splitKreduce_kernel (1.6-1.8 us in the layer's profile), and the
// all-reduce then sums the ranks' outputs. If one strided-batched GEMM over
// S slices of K wrote S partial outputs at the same speed as the split-K
// kernel alone, the all-reduce kernel could sum S x world partials and the
// reduce kernel (and one gap in the graph) would go.
//
// Times, in CUDA graphs of 20 calls: cublasGemmEx as the runtime calls it
// (split-K and its reduce included), and the batched GEMM over S = 2..8 K
// slices (without any reduction), with bf16 partials and with f32 ones
// (which a sum would round once, as cuBLAS's split-K reduce does); checks
// that the S partials sum to cublasGemmEx's result within bf16 rounding.
//
// K (default 7168) and the number of weight copies the calls of a graph
// rotate through (default 1) come from the command line: with copies
// whose total exceeds L2 (60 MB on an H200), every call reads its weight
// from HBM, as in a model whose layers each have their own.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 splitk_partials_probe.cu -lcublas -o probe && ./probe [K] [copies]
#include "probe_timing.h"

#include <cuda_bf16.h>
#include <cmath>
#include <vector>

constexpr int N = 4096;

int main(int argc, char **argv) {
  const int K = argc > 1 ? std::atoi(argv[1]) : 7168;
  const int copies = argc > 2 ? std::max(1, std::atoi(argv[2])) : 1;
  printf("K=%d N=%d, %d weight copies (%.0f MB)\n", K, N, copies, copies * (double)K * N * 2 / 1e6);
  cublasHandle_t blas; BL(cublasCreate(&blas));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  BL(cublasSetStream(blas, s));
  const int MAXM = 128, MAXS = 8;
  __nv_bfloat16 *a, *w, *out, *parts;
  float *parts32;
  CK(cudaMalloc(&a, MAXM * (size_t)K * 2)); CK(cudaMalloc(&w, copies * (size_t)K * N * 2));
  CK(cudaMalloc(&out, MAXM * (size_t)N * 2)); CK(cudaMalloc(&parts, MAXS * MAXM * (size_t)N * 2));
  CK(cudaMalloc(&parts32, MAXS * MAXM * (size_t)N * 4));
  for (auto [ptr, n] : {std::pair{a, MAXM * (size_t)K}, {w, (size_t)K * N}}) {
    std::vector<__nv_bfloat16> h(n);
    for (size_t i = 0; i < n; i++) h[i] = __float2bfloat16((float)((i * 2654435761u) % 1000) / 1000.f - 0.5f);
    CK(cudaMemcpy(ptr, h.data(), n * 2, cudaMemcpyHostToDevice));
  }
  // The copies hold the same values, so any call's result is the reference.
  for (int c = 1; c < copies; c++)
    CK(cudaMemcpy(w + (size_t)c * K * N, w, (size_t)K * N * 2, cudaMemcpyDeviceToDevice));
  float one = 1.f, zero = 0.f;
  // Each call takes the next weight copy.
  int call = 0;
  auto weight = [&] { return w + (size_t)(call++ % copies) * K * N; };
  for (int m : {1, 16, 64, 128}) {
    auto gemm = [&] {
      cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, m, K, &one, weight(), CUDA_R_16BF, N, a, CUDA_R_16BF, K, &zero, out,
                   CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    float t0 = graph_us(s, gemm);
    std::vector<__nv_bfloat16> ref(m * (size_t)N), got(MAXS * m * (size_t)N);
    CK(cudaMemcpy(ref.data(), out, ref.size() * 2, cudaMemcpyDeviceToHost));
    printf("M=%d cublasGemmEx (split-K and its reduce): %.2f us\n", m, t0);
    for (int slices : {2, 3, 4, 6, 8}) {
      if (K % slices) continue;
      const int k = K / slices;
      // Row-major A (m x K) and W (K x N): slice i is A's columns and W's rows
      // [i k, (i + 1) k), i.e. offsets of k elements in A and k N in W.
      auto batched = [&] {
        cublasGemmStridedBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, m, k, &one, weight(), CUDA_R_16BF, N, (long long)k * N, a,
                                   CUDA_R_16BF, K, k, &zero, parts, CUDA_R_16BF, N, (long long)m * N, slices,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      };
      float t = graph_us(s, batched);
      CK(cudaMemcpy(got.data(), parts, slices * m * (size_t)N * 2, cudaMemcpyDeviceToHost));
      double worst = 0;
      for (size_t i = 0; i < m * (size_t)N; i++) {
        float sum = 0;
        for (int p = 0; p < slices; p++) sum += __bfloat162float(got[p * m * (size_t)N + i]);
        float r = __bfloat162float(ref[i]);
        worst = std::max(worst, (double)std::fabs(sum - r) / (std::fabs(r) + 1.0));
      }
      auto batched32 = [&] {
        cublasGemmStridedBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, m, k, &one, weight(), CUDA_R_16BF, N, (long long)k * N, a,
                                   CUDA_R_16BF, K, k, &zero, parts32, CUDA_R_32F, N, (long long)m * N, slices,
                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
      };
      float t32 = graph_us(s, batched32);
      std::vector<float> got32(slices * m * (size_t)N);
      CK(cudaMemcpy(got32.data(), parts32, got32.size() * 4, cudaMemcpyDeviceToHost));
      double worst32 = 0;
      for (size_t i = 0; i < m * (size_t)N; i++) {
        float sum = 0;
        for (int p = 0; p < slices; p++) sum += got32[p * m * (size_t)N + i];
        float r = __bfloat162float(ref[i]), rounded = __bfloat162float(__float2bfloat16(sum));
        worst32 = std::max(worst32, (double)std::fabs(rounded - r) / (std::fabs(r) + 1.0));
      }
      printf("M=%d S=%d batched over K slices: bf16 partials %.2f us (%.3fx cublasGemmEx, worst %.2e), "
             "f32 partials %.2f us (%.3fx, worst %.2e after one rounding)\n",
             m, slices, t, t0 / t, worst, t32, t0 / t32, worst32);
    }
  }
  return 0;
}
