// Probe (issue 32, session 37): does cuBLASLt hold a faster kernel than the
// one cuBLAS's default heuristic takes for the GEMMs our layers run at
// 16-2048 rows? The runtime calls cublasGemmStridedBatchedEx with
// CUBLAS_GEMM_DEFAULT: gate and up as one batched GEMM (batch 2, the
// weights at a stride), the down projection's split-K slices as a batch of
// f32 partials, and single GEMMs. For each shape this times, in CUDA
// graphs with the weights rotated past L2:
//   - `ex`: cublasGemmStridedBatchedEx, CUBLAS_GEMM_DEFAULT (today's call);
//   - `lt[i]`: each of up to 64 algorithms cuBLASLt's heuristic returns
//     for the same problem, checked against `ex`'s output;
//   - for the pair, `cat`: one GEMM over the concatenated weight (what
//     torch and torch.compile run).
// Not shipped: built on the device with nvcc (-lcublasLt -lcublas).
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CK(x)                                                                      \
  do {                                                                             \
    auto e_ = (x);                                                                 \
    if ((int)e_ != 0) {                                                            \
      fprintf(stderr, "%s:%d %s failed: %d\n", __FILE__, __LINE__, #x, (int)e_);    \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

// Row-major problem: c_i (m x n) = a_i (m x k, row stride a_ld) @ b_i (k x n).
struct Problem {
  std::string name;
  int m, k, n, batch;
  long a_ld, a_stride, b_stride, c_stride;
  bool f32_out;
};

static cudaStream_t stream;
static const size_t WORKSPACE = 32u << 20;
static void *workspace;

#include "graph_time.cuh"

// Minimum over `rounds` graph replays of `reps` calls, µs per call.
static float time_graph(const std::function<void(int)> &call, int reps, int rounds = 3) {
  return graph_times(stream, call, reps, rounds).first;
}

#include "fill.cuh"

// Largest relative difference of two outputs (bf16 or f32), as floats.
static double max_diff(const void *x, const void *y, size_t n, bool f32) {
  std::vector<float> hx(n), hy(n);
  if (f32) {
    CK(cudaMemcpy(hx.data(), x, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost));
  } else {
    std::vector<__nv_bfloat16> bx(n), by(n);
    CK(cudaMemcpy(bx.data(), x, n * 2, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(by.data(), y, n * 2, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; ++i) hx[i] = __bfloat162float(bx[i]), hy[i] = __bfloat162float(by[i]);
  }
  double scale = 0, diff = 0;
  for (size_t i = 0; i < n; ++i) {
    scale = std::max(scale, (double)std::fabs(hx[i]));
    diff = std::max(diff, (double)std::fabs(hx[i] - hy[i]));
  }
  return diff / std::max(scale, 1e-30);
}

int main(int argc, char **argv) {
  const int max_algos = argc > 1 ? atoi(argv[1]) : 64;
  CK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  CK(cudaMalloc(&workspace, WORKSPACE));
  cublasHandle_t blas;
  cublasLtHandle_t lt;
  CK(cublasCreate(&blas));
  CK(cublasSetStream(blas, stream));
  CK(cublasLtCreate(&lt));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("%s, cuBLAS %d, cuBLASLt %zu, workspace %zu MiB\n", prop.name, CUBLAS_VERSION,
         cublasLtGetVersion(), WORKSPACE >> 20);

  const char *rows_env = getenv("PROBE_ROWS");
  std::vector<int> rows;
  {
    std::string s = rows_env ? rows_env : "16,32,64,128,256,512,2048";
    size_t p = 0;
    while (p < s.size()) {
      size_t q = s.find(',', p);
      if (q == std::string::npos) q = s.size();
      rows.push_back(atoi(s.substr(p, q - p).c_str()));
      p = q + 1;
    }
  }
  const int D = getenv("PROBE_D") ? atoi(getenv("PROBE_D")) : 4096;
  const int F = getenv("PROBE_F") ? atoi(getenv("PROBE_F")) : 7168;  // a TP-2 rank's shard
  const int O = getenv("PROBE_O") ? atoi(getenv("PROBE_O")) : 2048;  // o_proj's K at TP 2
  const int SPLIT_MAX = getenv("PROBE_SPLIT_MAX") ? atoi(getenv("PROBE_SPLIT_MAX")) : 128;

  for (int m : rows) {
    std::vector<Problem> problems = {
        {"gate+up (batched)", m, D, F, 2, D, 0, 0, (long)m * F, false},
        {m <= SPLIT_MAX ? "down (2 split-K slices, f32)" : "down", m, m <= SPLIT_MAX ? F / 2 : F, D,
         m <= SPLIT_MAX ? 2 : 1, F, m <= SPLIT_MAX ? F / 2 : 0, 0, (long)m * D, m <= SPLIT_MAX},
        {"o_proj", m, O, D, 1, O, 0, 0, 0, false},
    };
    for (Problem p : problems) {
      // Weights: `copies` sets of `batch` matrices, each batch at a stride
      // of k x n + 64 elements (separate matrices, as a model's are).
      const size_t b_elems = (size_t)p.k * p.n;
      if (p.batch == 2 && p.a_stride == 0) p.b_stride = (long)b_elems + 64;
      if (p.batch == 2 && p.a_stride != 0) p.b_stride = (long)b_elems;  // slices of one weight
      const size_t set_elems = p.batch == 2 ? (size_t)p.b_stride + b_elems : b_elems;
      const size_t set_bytes = set_elems * 2;
      const int copies = (int)std::max<size_t>(2, (400u << 20) / set_bytes + 1);
      __nv_bfloat16 *w, *a, *cat = nullptr;
      void *c, *c_ref;
      const size_t a_elems = (size_t)p.m * p.a_ld;
      const size_t c_elems = (size_t)p.m * p.n * p.batch;
      const size_t c_bytes = c_elems * (p.f32_out ? 4 : 2);
      CK(cudaMalloc(&w, set_bytes * copies));
      CK(cudaMalloc(&a, a_elems * 2));
      CK(cudaMalloc(&c, c_bytes));
      CK(cudaMalloc(&c_ref, c_bytes));
      fill<<<1024, 256, 0, stream>>>(w, set_elems * copies, 1, 0.05f);
      fill<<<1024, 256, 0, stream>>>(a, a_elems, 2, 2.f);
      const bool pair = p.batch == 2 && p.a_stride == 0;
      if (pair) {
        CK(cudaMalloc(&cat, (size_t)p.k * 2 * p.n * 2 * copies));
        fill<<<1024, 256, 0, stream>>>(cat, (size_t)p.k * 2 * p.n * copies, 3, 0.05f);
      }
      CK(cudaStreamSynchronize(stream));
      const cudaDataType out_t = p.f32_out ? CUDA_R_32F : CUDA_R_16BF;
      const float alpha = 1.f, beta = 0.f;
      auto ex = [&](int i, void *out) {
        const __nv_bfloat16 *wi = w + (size_t)(i % copies) * set_elems;
        CK(cublasGemmStridedBatchedEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &alpha, wi,
                                      CUDA_R_16BF, p.n, p.b_stride, a, CUDA_R_16BF, p.a_ld, p.a_stride,
                                      &beta, out, out_t, p.n, p.c_stride, p.batch, CUBLAS_COMPUTE_32F,
                                      CUBLAS_GEMM_DEFAULT));
      };
      ex(0, c_ref);
      CK(cudaStreamSynchronize(stream));
      const float t_ex = time_graph([&](int i) { ex(i, c); }, 4 * copies);
      float t_cat = 0;
      if (pair) {
        t_cat = time_graph(
            [&](int i) {
              CK(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, 2 * p.n, p.m, p.k, &alpha,
                              cat + (size_t)(i % copies) * p.k * 2 * p.n, CUDA_R_16BF, 2 * p.n, a,
                              CUDA_R_16BF, p.a_ld, &beta, c, CUDA_R_16BF, 2 * p.n, CUBLAS_COMPUTE_32F,
                              CUBLAS_GEMM_DEFAULT));
            },
            4 * copies);
      }
      // cuBLASLt: the same problem, column-major C^T = W^T A^T.
      cublasLtMatmulDesc_t desc;
      CK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
      cublasLtMatrixLayout_t lw, la, lc;
      CK(cublasLtMatrixLayoutCreate(&lw, CUDA_R_16BF, p.n, p.k, p.n));
      CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, p.k, p.m, p.a_ld));
      CK(cublasLtMatrixLayoutCreate(&lc, out_t, p.n, p.m, p.n));
      for (auto [l, stride] : {std::pair{lw, p.b_stride}, {la, p.a_stride}, {lc, p.c_stride}}) {
        int32_t count = p.batch;
        int64_t s = stride;
        CK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
        CK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &s, sizeof s));
      }
      cublasLtMatmulPreference_t pref;
      CK(cublasLtMatmulPreferenceCreate(&pref));
      size_t ws = WORKSPACE;
      CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
      std::vector<cublasLtMatmulHeuristicResult_t> found(max_algos);
      int n_found = 0;
      CK(cublasLtMatmulAlgoGetHeuristic(lt, desc, lw, la, lc, lc, pref, max_algos, found.data(), &n_found));
      const double bytes = (double)p.batch * b_elems * 2;
      printf("\n%s, M=%d K=%d N=%d batch %d: %d algorithms\n", p.name.c_str(), p.m, p.k, p.n, p.batch, n_found);
      printf("  ex default: %.1f us (%.2f TB/s)\n", t_ex, bytes / t_ex / 1e6);
      if (pair) printf("  cat (one GEMM, N=%d): %.1f us\n", 2 * p.n, t_cat);
      float best = 1e30f;
      int best_i = -1;
      for (int h = 0; h < n_found; ++h) {
        auto lt_call = [&](int i, void *out) {
          const __nv_bfloat16 *wi = w + (size_t)(i % copies) * set_elems;
          return cublasLtMatmul(lt, desc, &alpha, wi, lw, a, la, &beta, out, lc, out, lc, &found[h].algo,
                                workspace, WORKSPACE, stream);
        };
        CK(cudaMemset(c, 0xff, c_bytes));
        if (lt_call(0, c) != CUBLAS_STATUS_SUCCESS) {
          printf("  lt[%2d]: refused\n", h);
          continue;
        }
        CK(cudaStreamSynchronize(stream));
        const double diff = max_diff(c, c_ref, c_elems, p.f32_out);
        const float t = time_graph([&](int i) { CK(lt_call(i, c)); }, 4 * copies);
        int tile = 0, splitk = 0, stages = 0, id = 0;
        cublasLtMatmulAlgoConfigGetAttribute(&found[h].algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, nullptr);
        cublasLtMatmulAlgoConfigGetAttribute(&found[h].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, nullptr);
        cublasLtMatmulAlgoConfigGetAttribute(&found[h].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, nullptr);
        cublasLtMatmulAlgoConfigGetAttribute(&found[h].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, nullptr);
        printf("  lt[%2d]: %.1f us (%.2f TB/s) id %d tile %d splitk %d stages %d ws %zu diff %.1e%s\n", h, t,
               bytes / t / 1e6, id, tile, splitk, stages, found[h].workspaceSize, diff,
               diff > 1e-2 ? " WRONG" : "");
        if (diff <= 1e-2 && t < best) best = t, best_i = h;
      }
      printf("  => best lt[%d] %.1f us against ex %.1f: %.2fx\n", best_i, best, t_ex, t_ex / best);
      // PROBE_EXHAUSTIVE=1: every algorithm id and tile the
      // library says it has for this problem (cublasLtMatmulAlgoCheck
      // decides), beyond the heuristic's list.
      if (getenv("PROBE_EXHAUSTIVE")) {
        int ids[64], n_ids = 0;
        CK(cublasLtMatmulAlgoGetIds(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, out_t,
                                    out_t, 64, ids, &n_ids));
        float xbest = 1e30f;
        int tried = 0;
        for (int ii = 0; ii < n_ids; ++ii) {
          cublasLtMatmulAlgo_t algo;
          if (cublasLtMatmulAlgoInit(lt, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUDA_R_16BF, CUDA_R_16BF, out_t,
                                     out_t, ids[ii], &algo) != CUBLAS_STATUS_SUCCESS)
            continue;
          auto cap = [&](cublasLtMatmulAlgoCapAttributes_t what) {
            size_t size = 0;
            cublasLtMatmulAlgoCapGetAttribute(&algo, what, nullptr, 0, &size);
            std::vector<uint32_t> v(size / 4);
            if (size) cublasLtMatmulAlgoCapGetAttribute(&algo, what, v.data(), size, &size);
            if (v.empty()) v.push_back(0);
            return v;
          };
          const auto tiles = cap(CUBLASLT_ALGO_CAP_TILE_IDS);
          for (uint32_t tile : tiles) {
              const uint32_t cl = 0;
              cublasLtMatmulAlgo_t x = algo;
              cublasLtMatmulAlgoConfigSetAttribute(&x, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile);
              cublasLtMatmulHeuristicResult_t check;
              if (cublasLtMatmulAlgoCheck(lt, desc, lw, la, lc, lc, &x, &check) != CUBLAS_STATUS_SUCCESS ||
                  check.workspaceSize > WORKSPACE)
                continue;
              auto call = [&](int i) {
                const __nv_bfloat16 *wi = w + (size_t)(i % copies) * set_elems;
                return cublasLtMatmul(lt, desc, &alpha, wi, lw, a, la, &beta, c, lc, c, lc, &x, workspace,
                                      WORKSPACE, stream);
              };
              CK(cudaMemset(c, 0xff, c_bytes));
              if (call(0) != CUBLAS_STATUS_SUCCESS) continue;
              if (cudaStreamSynchronize(stream) != cudaSuccess) {
                printf("  x id %d tile %u cluster %u: failed\n", ids[ii], tile, cl);
                exit(1);
              }
              const double diff = max_diff(c, c_ref, c_elems, p.f32_out);
              if (diff > 1e-2) continue;
              ++tried;
              const float t = time_graph([&](int i) { CK(call(i)); }, 2 * copies, 2);
              if (t < xbest * 1.01f)
                printf("  x id %d tile %u cluster %u: %.1f us\n", ids[ii], tile, cl, t);
              xbest = std::min(xbest, t);
            }
        }
        printf("  => exhaustive: %d configurations, best %.1f us (heuristic's best %.1f, ex %.1f)\n", tried,
               xbest, best, t_ex);
      }
      cublasLtMatmulPreferenceDestroy(pref);
      cublasLtMatrixLayoutDestroy(lw);
      cublasLtMatrixLayoutDestroy(la);
      cublasLtMatrixLayoutDestroy(lc);
      cublasLtMatmulDescDestroy(desc);
      cudaFree(w);
      cudaFree(a);
      cudaFree(c);
      cudaFree(c_ref);
      if (cat) cudaFree(cat);
      fflush(stdout);
    }
  }
  return 0;
}
