// Why replaying many CUDA graphs in turn is slower than replaying one
// (bench/results/2026-11-28-graph-cache-h200.md: the Llama MLP block's
// graph per set of arguments, 80 sets in turn, 81.7 µs a call against 51.6
// eager). A "layer" here is KERNELS kernels that each hold every SM for
// SPIN_US microseconds (clock spin, no memory traffic: only launches and
// graphs differ), each writing to the layer's own buffer. LAYERS layers are
// called in turn, the way a model calls one compiled layer per layer with
// its own weights:
//   eager     the kernels launched on the stream
//   graphs    one graph per layer (captured once), replayed in turn
//   upload    the same, each graph uploaded to the stream after instantiation
//   setparams one graph; before each replay its kernel nodes' pointer
//             argument is set to the layer's buffer (cudaGraphExecKernelNodeSetParams)
//   memset    a graph per layer as in graphs, each starting with a memset of
//             64 KB of the layer's own scratch (a memset node)
//   legacy    a graph per layer captured on the probe's stream, replayed on
//             the legacy default stream (as the runtime did for a call on it)
//   lupload   the same, each graph uploaded to the legacy stream once made
//   hop       a call on the legacy stream replays its graph on the probe's
//             stream, joined to the legacy stream by an event each way
// each with and without programmatic dependent launch (PDL) between the
// kernels. Prints µs per layer call on the GPU (events over 10 steps of all
// layers, best of 3 rounds) and the host's µs per call to enqueue, and
// checks that every call wrote its layer's buffer.
//   nvcc -O3 -arch=sm_90 -o /tmp/graph_cycle bench/probes/graph_cycle_probe.cu
//   /tmp/graph_cycle [KERNELS SPIN_US]
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x)                                                               \
  do {                                                                      \
    auto e = (x);                                                           \
    if (e != cudaSuccess) {                                                 \
      printf("%s: %s\n", #x, cudaGetErrorString(e));                        \
      exit(1);                                                              \
    }                                                                       \
  } while (0)

__global__ void spin(unsigned long long cycles, int* out, int value, int pdl) {
  if (pdl) asm volatile("griddepcontrol.wait;" ::: "memory");
  unsigned long long start = clock64();
  while (clock64() - start < cycles) {
  }
  if (pdl) asm volatile("griddepcontrol.launch_dependents;");
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] += value;
}

struct Probe {
  int kernels, sms;
  unsigned long long cycles;
  cudaStream_t s;

  void launch(int* out, int value, bool pdl) {
    cudaLaunchConfig_t config = {};
    config.gridDim = dim3(sms);
    config.blockDim = dim3(128);
    config.stream = s;
    cudaLaunchAttribute attribute[1];
    attribute[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attribute[0].val.programmaticStreamSerializationAllowed = 1;
    config.attrs = attribute;
    config.numAttrs = pdl ? 1 : 0;
    CK(cudaLaunchKernelEx(&config, spin, cycles, out, value, int(pdl)));
  }

  void layer(int* out, bool pdl) {
    for (int k = 0; k < kernels; k++) launch(out, 1, pdl);
  }

  cudaGraphExec_t capture(int* out, bool pdl, cudaGraph_t* graph, void* scratch = nullptr) {
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    if (scratch) CK(cudaMemsetAsync(scratch, 0, 64 << 10, s));
    layer(out, pdl);
    CK(cudaStreamEndCapture(s, graph));
    cudaGraphExec_t exec;
    CK(cudaGraphInstantiate(&exec, *graph, 0));
    return exec;
  }
};

int main(int argc, char** argv) {
  Probe p;
  p.kernels = argc > 1 ? atoi(argv[1]) : 5;
  double spin_us = argc > 2 ? atof(argv[2]) : 9.0;
  int device = 0, clock_khz = 0;
  CK(cudaGetDevice(&device));
  CK(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, device));
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  p.cycles = (unsigned long long)(spin_us * clock_khz / 1000.0);
  CK(cudaStreamCreateWithFlags(&p.s, cudaStreamNonBlocking));
  printf("%d kernels a layer, each %.1f us of spin on %d SMs\n", p.kernels, spin_us, p.sms);
  const int steps = 10;
  bool failed = false;
  for (int layers : {1, 8, 32, 80, 128}) {
    int* buffers;
    CK(cudaMalloc(&buffers, layers * 64 * sizeof(int)));
    char* scratch;
    CK(cudaMalloc(&scratch, size_t(layers) << 16));
    auto out = [&](int l) { return buffers + l * 64; };
    for (bool pdl : {false, true}) {
      for (const char* mode : {"eager", "graphs", "upload", "setparams", "memset", "legacy", "lupload", "hop"}) {
        std::string m = mode;
        std::vector<cudaGraph_t> graphs;
        std::vector<cudaGraphExec_t> execs;
        std::vector<cudaGraphNode_t> nodes;
        std::vector<cudaKernelNodeParams> params;
        bool on_legacy = m == "legacy" || m == "lupload" || m == "hop";
        cudaStream_t where = on_legacy ? cudaStreamLegacy : p.s;
        cudaEvent_t into, back;
        CK(cudaEventCreateWithFlags(&into, cudaEventDisableTiming));
        CK(cudaEventCreateWithFlags(&back, cudaEventDisableTiming));
        if (m == "graphs" || m == "upload" || m == "memset" || on_legacy) {
          for (int l = 0; l < layers; l++) {
            cudaGraph_t g;
            execs.push_back(p.capture(out(l), pdl, &g, m == "memset" ? scratch + (size_t(l) << 16) : nullptr));
            graphs.push_back(g);
            if (m == "upload") CK(cudaGraphUpload(execs.back(), p.s));
            if (m == "lupload") CK(cudaGraphUpload(execs.back(), cudaStreamLegacy));
          }
        } else if (m == "setparams") {
          cudaGraph_t g;
          execs.push_back(p.capture(out(0), pdl, &g));
          graphs.push_back(g);
          size_t count = 0;
          CK(cudaGraphGetNodes(g, nullptr, &count));
          nodes.resize(count);
          CK(cudaGraphGetNodes(g, nodes.data(), &count));
          for (auto node : nodes) {
            cudaKernelNodeParams kp;
            CK(cudaGraphKernelNodeGetParams(node, &kp));
            params.push_back(kp);
          }
        }
        // The argument values each set of params points at (one per layer).
        std::vector<int*> pointers(layers);
        for (int l = 0; l < layers; l++) pointers[l] = out(l);
        auto call = [&](int l) {
          if (m == "eager") {
            p.layer(out(l), pdl);
          } else if (m == "setparams") {
            for (size_t i = 0; i < nodes.size(); i++) {
              void* args[4];
              for (int a = 0; a < 4; a++) args[a] = params[i].kernelParams[a];
              args[1] = &pointers[l];
              cudaKernelNodeParams kp = params[i];
              kp.kernelParams = args;
              CK(cudaGraphExecKernelNodeSetParams(execs[0], nodes[i], &kp));
            }
            CK(cudaGraphLaunch(execs[0], p.s));
          } else if (m == "hop") {
            CK(cudaEventRecord(into, cudaStreamLegacy));
            CK(cudaStreamWaitEvent(p.s, into, 0));
            CK(cudaGraphLaunch(execs[l], p.s));
            CK(cudaEventRecord(back, p.s));
            CK(cudaStreamWaitEvent(cudaStreamLegacy, back, 0));
          } else {
            CK(cudaGraphLaunch(execs[l], where));
          }
        };
        CK(cudaMemsetAsync(buffers, 0, layers * 64 * sizeof(int), p.s));
        for (int l = 0; l < layers; l++) call(l);  // warm-up
        CK(cudaStreamSynchronize(p.s));
        CK(cudaStreamSynchronize(where));
        cudaEvent_t a, b;
        CK(cudaEventCreate(&a));
        CK(cudaEventCreate(&b));
        float best = 1e9;
        double host_best = 1e9;
        for (int round = 0; round < 3; round++) {
          CK(cudaEventRecord(a, where));
          auto t0 = std::chrono::steady_clock::now();
          for (int step = 0; step < steps; step++)
            for (int l = 0; l < layers; l++) call(l);
          auto t1 = std::chrono::steady_clock::now();
          CK(cudaEventRecord(b, where));
          CK(cudaEventSynchronize(b));
          float ms;
          CK(cudaEventElapsedTime(&ms, a, b));
          best = std::min(best, ms * 1000.f / (steps * layers));
          host_best = std::min(
              host_best, std::chrono::duration<double, std::micro>(t1 - t0).count() / (steps * layers));
        }
        std::vector<int> got(layers * 64);
        CK(cudaMemcpy(got.data(), buffers, got.size() * sizeof(int), cudaMemcpyDeviceToHost));
        int want = p.kernels * (1 + 3 * steps);
        bool ok = true;
        for (int l = 0; l < layers; l++) ok &= got[l * 64] == want;
        failed |= !ok;
        printf("%-4s layers %3d pdl %d %-9s %7.2f us a call on the GPU, %6.2f us to enqueue  %s\n",
               ok ? "PASS" : "FAIL", layers, int(pdl), mode, best, host_best,
               ok ? "" : "(a layer's buffer has the wrong count)");
        for (auto exec : execs) CK(cudaGraphExecDestroy(exec));
        for (auto graph : graphs) CK(cudaGraphDestroy(graph));
        CK(cudaEventDestroy(a));
        CK(cudaEventDestroy(b));
        CK(cudaEventDestroy(into));
        CK(cudaEventDestroy(back));
      }
    }
    CK(cudaFree(buffers));
    CK(cudaFree(scratch));
  }
  return failed ? 1 : 0;
}
