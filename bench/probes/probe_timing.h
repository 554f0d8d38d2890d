// What the probes share: error checks and the time of a call in a CUDA
// graph of 20 calls (best of 5 rounds of 10 replays, after 3).
#pragma once
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#define CK(x) do { auto e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
#define BL(x) do { auto e = (x); if (e != CUBLAS_STATUS_SUCCESS) { printf("%s: %d\n", #x, (int)e); exit(1);} } while (0)

// µs per call of f, captured 20 times into one CUDA graph on stream s.
template <typename F> float graph_us(cudaStream_t s, F f) {
  for (int i = 0; i < 3; i++) f();
  CK(cudaStreamSynchronize(s));
  cudaGraph_t g; cudaGraphExec_t ge;
  CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < 20; i++) f();
  CK(cudaStreamEndCapture(s, &g)); CK(cudaGraphInstantiate(&ge, g, 0));
  for (int i = 0; i < 3; i++) CK(cudaGraphLaunch(ge, s));
  cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
  float best = 1e9;
  for (int r = 0; r < 5; r++) {
    cudaEventRecord(a, s);
    for (int i = 0; i < 10; i++) CK(cudaGraphLaunch(ge, s));
    cudaEventRecord(b, s); CK(cudaEventSynchronize(b));
    float ms; cudaEventElapsedTime(&ms, a, b); best = std::min(best, ms * 1000.f / 200);
  }
  cudaGraphExecDestroy(ge); cudaGraphDestroy(g);
  return best;
}
