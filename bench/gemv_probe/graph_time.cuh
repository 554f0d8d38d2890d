// The probes' CUDA-graph timer, shared by lt_algos.cu and stream_k_down.cu:
// `reps` calls of `call` (given the call's index) captured once on
// `stream`, the graph launched once to warm up and then `rounds` times
// between two events. Returns the minimum and the median of the rounds,
// µs per call. The includer defines CK (a CUDA status check).
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

static std::pair<float, float> graph_times(cudaStream_t stream, const std::function<void(int)> &call, int reps,
                                           int rounds) {
  cudaGraph_t graph;
  cudaGraphExec_t exec;
  CK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < reps; ++i) call(i);
  CK(cudaStreamEndCapture(stream, &graph));
  CK(cudaGraphInstantiate(&exec, graph, 0));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaGraphLaunch(exec, stream));  // warm-up
  std::vector<float> t;
  for (int r = 0; r < rounds; ++r) {
    CK(cudaEventRecord(e0, stream));
    CK(cudaGraphLaunch(exec, stream));
    CK(cudaEventRecord(e1, stream));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    t.push_back(ms * 1000.f / reps);
  }
  std::sort(t.begin(), t.end());
  cudaGraphExecDestroy(exec);
  cudaGraphDestroy(graph);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return {t.front(), t[t.size() / 2]};
}
