// Probe (not shipped): gate and up, two matmuls sharing their lhs
// (M x 4096 @ 4096 x N each, bf16, f32 accumulation), as the runtime's
// symm_rt_matmul_pair runs them (one cublasGemmStridedBatchedEx of batch 2)
// against two cublasGemmEx calls (what torch runs), per M and N (N = 3584,
// 7168, 14336: tensor-parallel 4, 2, 1). Each call takes the next of
// enough weight pairs to exceed L2 (200 MB), so weights come from HBM, as
// in a model. Both results are compared bit for bit.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 gemm_pair_probe.cu -lcublas -o probe && ./probe
#include "probe_timing.h"

#include <cuda_bf16.h>
#include <cstring>
#include <vector>

constexpr int K = 4096, MAXM = 2048;

int main() {
  cublasHandle_t blas; BL(cublasCreate(&blas));
  cudaStream_t s; CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  BL(cublasSetStream(blas, s));
  float one = 1.f, zero = 0.f;
  __nv_bfloat16 *a;
  CK(cudaMalloc(&a, MAXM * (size_t)K * 2));
  {
    std::vector<__nv_bfloat16> h(MAXM * (size_t)K);
    for (size_t i = 0; i < h.size(); i++) h[i] = __float2bfloat16((float)((i * 2654435761u) % 1000) / 1000.f - 0.5f);
    CK(cudaMemcpy(a, h.data(), h.size() * 2, cudaMemcpyHostToDevice));
  }
  for (int n : {3584, 7168, 14336}) {
    const size_t pair = 2 * (size_t)K * n;  // elements of one gate + up pair
    const int copies = std::max(1, (int)((200e6 + pair * 2 - 1) / (pair * 2)));
    __nv_bfloat16 *w, *c2, *cb;
    CK(cudaMalloc(&w, copies * pair * 2));
    CK(cudaMalloc(&c2, 2 * (size_t)MAXM * n * 2));
    CK(cudaMalloc(&cb, 2 * (size_t)MAXM * n * 2));
    {
      std::vector<__nv_bfloat16> h(pair);
      for (size_t i = 0; i < h.size(); i++) h[i] = __float2bfloat16((float)((i * 40503u) % 997) / 997.f - 0.5f);
      for (int c = 0; c < copies; c++) CK(cudaMemcpy(w + c * pair, h.data(), pair * 2, cudaMemcpyHostToDevice));
    }
    printf("N=%d per weight, K=%d, %d weight pairs (%.0f MB)\n", n, K, copies, copies * pair * 2 / 1e6);
    for (int m : {1, 8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048}) {
      int call = 0;
      auto weights = [&] { return w + (size_t)(call++ % copies) * pair; };
      // Row-major C_i (m x n) = A (m x K) @ B_i (K x n): column-major C^T = B^T A^T.
      auto two = [&] {
        __nv_bfloat16 *b = weights();
        for (int i = 0; i < 2; i++)
          BL(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, K, &one, b + i * (size_t)K * n, CUDA_R_16BF, n, a,
                          CUDA_R_16BF, K, &zero, c2 + i * (size_t)MAXM * n, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F,
                          CUBLAS_GEMM_DEFAULT));
      };
      auto batched = [&] {
        BL(cublasGemmStridedBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, K, &one, weights(), CUDA_R_16BF, n,
                                      (long long)K * n, a, CUDA_R_16BF, K, 0, &zero, cb, CUDA_R_16BF, n,
                                      (long long)MAXM * n, 2, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
      };
      float t2 = graph_us(s, two), tb = graph_us(s, batched);
      std::vector<unsigned short> r2(2 * (size_t)m * n), rb(2 * (size_t)m * n);
      for (int i = 0; i < 2; i++) {
        CK(cudaMemcpy(r2.data() + i * (size_t)m * n, c2 + i * (size_t)MAXM * n, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(rb.data() + i * (size_t)m * n, cb + i * (size_t)MAXM * n, (size_t)m * n * 2, cudaMemcpyDeviceToHost));
      }
      size_t differ = 0;
      for (size_t i = 0; i < r2.size(); i++) differ += r2[i] != rb[i];
      printf("N=%d M=%d: two GEMMs %.2f us, batched pair %.2f us (two / batched %.3f), %zu of %zu elements differ\n",
             n, m, t2, tb, t2 / tb, differ, r2.size());
    }
    CK(cudaFree(w)); CK(cudaFree(c2)); CK(cudaFree(cb));
  }
  return 0;
}
