// Probe (not shipped): can the down projection at prefill (M = 2048,
// K = 7168, N = 4096, bf16: Llama-3-8B TP 2) leave room for its
// all-reduce? One GPU: the all-reduce is stood in for by a kernel with the
// one-shot's local traffic (read this rank's chunk and a second buffer as
// the peer's, write the sum: 3 x 2 bytes per element) on B blocks. The
// GEMM runs in C row chunks on the main stream; the stand-in of chunk i
// runs on a high-priority side stream after chunk i's GEMM (event), while
// chunk i+1 computes; cuBLAS may be told to use fewer SMs
// (cublasSetSmCountTarget). Everything is timed in CUDA graphs (fork and
// join by events), against the GEMM alone, the stand-in alone and both in
// sequence. The chunked GEMM's output is compared bit for bit with the
// whole GEMM's, and the stand-in's with a sequential run.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 gemm_overlap_probe.cu -lcublas -o probe && ./probe
#include "probe_timing.h"

#include <cuda_bf16.h>
#include <vector>

constexpr int M = 2048, K = 7168, N = 4096;

// out = a + b over `vectors` 16-byte vectors (8 bf16 each), grid-stride.
__global__ void stand_in(const uint4 *a, const uint4 *b, uint4 *out, size_t vectors) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < vectors;
       i += (size_t)gridDim.x * blockDim.x) {
    uint4 x = a[i], y = b[i], z;
    auto *px = reinterpret_cast<__nv_bfloat162 *>(&x);
    auto *py = reinterpret_cast<__nv_bfloat162 *>(&y);
    auto *pz = reinterpret_cast<__nv_bfloat162 *>(&z);
    for (int j = 0; j < 4; j++) pz[j] = __hadd2(px[j], py[j]);
    out[i] = z;
  }
}

int main() {
  cublasHandle_t blas; BL(cublasCreate(&blas));
  int lo, hi; CK(cudaDeviceGetStreamPriorityRange(&lo, &hi));
  cudaStream_t s, side;
  CK(cudaStreamCreateWithPriority(&s, cudaStreamNonBlocking, lo));
  CK(cudaStreamCreateWithPriority(&side, cudaStreamNonBlocking, hi));
  BL(cublasSetStream(blas, s));
  int sms; CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  float one = 1.f, zero = 0.f;
  __nv_bfloat16 *a, *w, *c, *c_whole, *peer, *out, *out_ref;
  CK(cudaMalloc(&a, (size_t)M * K * 2)); CK(cudaMalloc(&w, (size_t)K * N * 2));
  for (auto **p : {&c, &c_whole, &peer, &out, &out_ref}) CK(cudaMalloc(p, (size_t)M * N * 2));
  {
    std::vector<__nv_bfloat16> h((size_t)K * N);
    for (size_t i = 0; i < h.size(); i++) h[i] = __float2bfloat16((float)((i * 40503u) % 997) / 997.f - 0.5f);
    CK(cudaMemcpy(w, h.data(), (size_t)K * N * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(a, h.data(), (size_t)M * K * 2, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(peer, h.data() + 7, (size_t)M * N * 2, cudaMemcpyHostToDevice));
  }
  // Row-major C (rows x N) = A (rows x K) @ W (K x N): column-major C^T = W^T A^T.
  auto gemm = [&](int row0, int rows, __nv_bfloat16 *dst) {
    BL(cublasGemmEx(blas, CUBLAS_OP_N, CUBLAS_OP_N, N, rows, K, &one, w, CUDA_R_16BF, N,
                    a + (size_t)row0 * K, CUDA_R_16BF, K, &zero, dst + (size_t)row0 * N, CUDA_R_16BF, N,
                    CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  auto ar = [&](cudaStream_t on, int row0, int rows, int blocks, __nv_bfloat16 *src, __nv_bfloat16 *dst) {
    size_t first = (size_t)row0 * N / 8, vectors = (size_t)rows * N / 8;
    stand_in<<<blocks, 512, 0, on>>>(reinterpret_cast<uint4 *>(src) + first,
                                      reinterpret_cast<uint4 *>(peer) + first,
                                      reinterpret_cast<uint4 *>(dst) + first, vectors);
  };
  const int most = 16;
  cudaEvent_t ready[most + 1], done;
  for (auto &event : ready) CK(cudaEventCreateWithFlags(&event, cudaEventDisableTiming));
  CK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));

  BL(cublasSetSmCountTarget(blas, 0));
  gemm(0, M, c_whole);
  ar(s, 0, M, sms, c_whole, out_ref);
  CK(cudaStreamSynchronize(s));
  float t_gemm = graph_us(s, [&] { gemm(0, M, c); });
  printf("SMs %d; GEMM %dx%dx%d alone: %.1f us (%.0f TFLOP/s)\n", sms, M, K, N, t_gemm,
         2.0 * M * K * N / t_gemm / 1e6);
  for (int blocks : {8, 16, 32, sms}) {
    float t_ar = graph_us(s, [&] { ar(s, 0, M, blocks, c_whole, out); });
    float t_seq = graph_us(s, [&] { gemm(0, M, c); ar(s, 0, M, blocks, c, out); });
    printf("stand-in on %d blocks: %.1f us alone; GEMM then stand-in: %.1f us\n", blocks, t_ar, t_seq);
  }
  // Can the stand-in share the GPU with a whole GEMM at all? Stand-in
  // first on the side stream, the GEMM on the main one, both forked from
  // the main stream. And a copy-engine stand-in: a device-to-device copy
  // of the chunk on the side stream (what a copy-engine peer transfer
  // would occupy: no SMs).
  constexpr size_t HOST_BYTES = 4u << 20;
  void *pinned; CK(cudaMallocHost(&pinned, HOST_BYTES));
  for (int round = 0; round < 3; round++) {
    BL(cublasSetSmCountTarget(blas, 0));
    float base = graph_us(s, [&] { gemm(0, M, c); });
    float both = graph_us(s, [&] {
      CK(cudaEventRecord(ready[0], s));
      CK(cudaStreamWaitEvent(side, ready[0]));
      ar(side, 0, M, 16, c_whole, out);
      gemm(0, M, c);
      CK(cudaEventRecord(done, side));
      CK(cudaStreamWaitEvent(s, done));
    });
    float copy = graph_us(s, [&] {
      CK(cudaMemcpyAsync(out, c_whole, (size_t)M * N * 2, cudaMemcpyDeviceToDevice, s));
    });
    float copy_both = graph_us(s, [&] {
      CK(cudaEventRecord(ready[0], s));
      CK(cudaStreamWaitEvent(side, ready[0]));
      CK(cudaMemcpyAsync(out, c_whole, (size_t)M * N * 2, cudaMemcpyDeviceToDevice, side));
      gemm(0, M, c);
      CK(cudaEventRecord(done, side));
      CK(cudaStreamWaitEvent(s, done));
    });
    // A transfer that surely runs on a copy engine and lasts as long as
    // the all-reduce: 4 MB to pinned host memory over PCIe.
    float host_copy = graph_us(s, [&] {
      CK(cudaMemcpyAsync(pinned, c_whole, HOST_BYTES, cudaMemcpyDeviceToHost, s));
    });
    float host_both = graph_us(s, [&] {
      CK(cudaEventRecord(ready[0], s));
      CK(cudaStreamWaitEvent(side, ready[0]));
      CK(cudaMemcpyAsync(pinned, c_whole, HOST_BYTES, cudaMemcpyDeviceToHost, side));
      gemm(0, M, c);
      CK(cudaEventRecord(done, side));
      CK(cudaStreamWaitEvent(s, done));
    });
    float base_after = graph_us(s, [&] { gemm(0, M, c); });
    printf("round %d: GEMM alone %.1f us; GEMM beside the 16-block stand-in (launched first) %.1f us; "
           "16 MB device copy alone %.1f us; GEMM beside the copy %.1f us; 4 MB to host alone %.1f us; "
           "GEMM beside it %.1f us; GEMM alone again %.1f us\n",
           round, base, both, copy, copy_both, host_copy, host_both, base_after);
  }
  if (getenv("PROBE_SHARING_ONLY")) return 0;
  for (int target : {0, sms - 16, sms - 32}) {
    BL(cublasSetSmCountTarget(blas, target));
    for (int chunks : {1, 2, 4, 8}) {
      int rows = M / chunks;
      BL(cublasSetSmCountTarget(blas, 0));
      float t_base = graph_us(s, [&] { gemm(0, M, c); });
      BL(cublasSetSmCountTarget(blas, target));
      float t_chunked = graph_us(s, [&] { for (int i = 0; i < chunks; i++) gemm(i * rows, rows, c); });
      for (int blocks : {16, 32}) {
        auto overlapped = [&] {
          for (int i = 0; i < chunks; i++) {
            gemm(i * rows, rows, c);
            CK(cudaEventRecord(ready[i], s));
            CK(cudaStreamWaitEvent(side, ready[i]));
            ar(side, i * rows, rows, blocks, c, out);
          }
          CK(cudaEventRecord(done, side));
          CK(cudaStreamWaitEvent(s, done));
        };
        float t = graph_us(s, overlapped);
        CK(cudaStreamSynchronize(s));
        std::vector<unsigned short> r1((size_t)M * N), r2((size_t)M * N), o1((size_t)M * N), o2((size_t)M * N);
        CK(cudaMemcpy(r1.data(), c, r1.size() * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(r2.data(), c_whole, r2.size() * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(o1.data(), out, o1.size() * 2, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(o2.data(), out_ref, o2.size() * 2, cudaMemcpyDeviceToHost));
        size_t gemm_differ = 0, out_differ = 0;
        for (size_t i = 0; i < r1.size(); i++) gemm_differ += r1[i] != r2[i], out_differ += o1[i] != o2[i];
        printf("sm target %3d, %d chunks: whole GEMM just before %.1f us, GEMM chunks alone %.1f us; with the stand-in (%d blocks, side "
               "stream) %.1f us; %zu GEMM and %zu sum elements differ from the whole GEMM's\n",
               target, chunks, t_base, t_chunked, blocks, t, gemm_differ, out_differ);
      }
    }
  }
  return 0;
}
