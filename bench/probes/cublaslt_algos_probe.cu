// Probe (not shipped): how fast the cuBLASLt algorithms its heuristic
// offers run the Llama-3-8B TP MLP GEMMs (bf16, f32 accumulate, row-major
// as the runtime calls them), against cublasGemmEx's default choice: does
// timing the candidates (autotuning) beat the default?
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CK(x) do { auto e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
#define LT(x) do { auto e = (x); if (e != CUBLAS_STATUS_SUCCESS) { printf("%s: %d\n", #x, (int)e); exit(1);} } while (0)

template <typename F> float time_us(F f, int iters = 100) {
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  for (int i = 0; i < 10; i++) f();
  cudaEventRecord(a);
  for (int i = 0; i < iters; i++) f();
  cudaEventRecord(b); CK(cudaEventSynchronize(b));
  float ms; cudaEventElapsedTime(&ms, a, b); return ms * 1000.f / iters;
}

int main() {
  cublasLtHandle_t lt; LT(cublasLtCreate(&lt));
  cublasHandle_t blas; cublasCreate(&blas);
  size_t ws_bytes = 64 << 20; void* ws; CK(cudaMalloc(&ws, ws_bytes));
  const int D = 4096, F = 7168;
  void *x, *w, *c; CK(cudaMalloc(&x, 2048 * (size_t)F * 2)); CK(cudaMalloc(&w, 2 * (size_t)D * F * 2)); CK(cudaMalloc(&c, 2 * 2048 * (size_t)F * 2));
  CK(cudaMemset(x, 0, 2048 * (size_t)F * 2)); CK(cudaMemset(w, 0, 2 * (size_t)D * F * 2));
  struct Case { const char* name; int m, n, k, batch; };
  std::vector<Case> cases;
  for (int m : {1, 16, 128}) { cases.push_back({"down", m, D, F, 1}); cases.push_back({"gate_up", m, F, D, 2}); }
  for (auto cs : cases) {
    int m = cs.m, n = cs.n, k = cs.k, batch = cs.batch;
    long long sw = (long long)k * n, sc = (long long)m * n;
    float one = 1.f, zero = 0.f;
    float t_blas = time_us([&] {
      cublasGemmStridedBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, w, CUDA_R_16BF, n, sw, x, CUDA_R_16BF, k, 0,
                                 &zero, c, CUDA_R_16BF, n, sc, batch, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    });
    cublasLtMatmulDesc_t op; LT(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, lc;
    LT(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, n, k, n));
    LT(cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, m, k));
    LT(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
    if (batch > 1) {
      long long zero64 = 0;
      for (auto [l, s] : {std::pair{la, sw}, std::pair{lb, zero64}, std::pair{lc, sc}}) {
        LT(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
        LT(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof s));
      }
    }
    cublasLtMatmulPreference_t pref; LT(cublasLtMatmulPreferenceCreate(&pref));
    LT(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes, sizeof ws_bytes));
    cublasLtMatmulHeuristicResult_t res[64]; int got = 0;
    LT(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 64, res, &got));
    std::vector<std::pair<float, int>> times;
    for (int i = 0; i < got; i++) {
      if (res[i].state != CUBLAS_STATUS_SUCCESS) continue;
      auto st = cublasLtMatmul(lt, op, &one, w, la, x, lb, &zero, c, lc, c, lc, &res[i].algo, ws, ws_bytes, 0);
      if (st != CUBLAS_STATUS_SUCCESS) continue;
      CK(cudaDeviceSynchronize());
      float t = time_us([&] { cublasLtMatmul(lt, op, &one, w, la, x, lb, &zero, c, lc, c, lc, &res[i].algo, ws, ws_bytes, 0); });
      times.push_back({t, i});
    }
    std::sort(times.begin(), times.end());
    double bytes = (double)batch * k * n * 2;
    printf("%-8s M=%4d: cublasGemmEx %.2f us (%.2f TB/s); cuBLASLt %d candidates: heuristic #0 ", cs.name, m, t_blas, bytes / t_blas / 1e6, got);
    for (auto& p : times) if (p.second == 0) printf("%.2f us", p.first);
    printf("; best:");
    for (size_t i = 0; i < std::min<size_t>(4, times.size()); i++) printf(" #%d %.2f us (%.2f TB/s)", times[i].second, times[i].first, bytes / times[i].first / 1e6);
    printf("\n");
  }
  return 0;
}
