// Runs the compiled examples/tp_mlp.mlir on every rank and checks it
// against a single-process reference of the whole (unsharded) model.
//
//   symm-compile examples/tp_mlp.mlir -o tp_mlp.o
//   c++ -O2 -I runtime/include -I . examples/cpp/tp_mlp.cpp tp_mlp.o
//       target/release/libsymm_runtime.a -lpthread -ldl -lm -o tp_mlp
//   symm-launch -n 2 ./tp_mlp [OUTPUT_FILE]
//
// Prints PASS or FAIL per rank (exit status 1 on FAIL) and the time per
// call, eager and replayed from a CUDA graph; with OUTPUT_FILE, rank 0 writes its result there (raw f32), so two
// builds (fused and unfused epilogues) can be compared byte for byte.
#include "tp_mlp.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
// The shapes of examples/tp_mlp.mlir; -DTP_M=.. -DTP_D=.. -DTP_F=.. for a
// copy of it with other shapes (test/Integration/tp_mlp.mlir makes one).
#ifndef TP_M
#define TP_M 64
#define TP_D 256
#define TP_F 1024
#endif
constexpr int M = TP_M, D = TP_D, F = TP_F, LAYERS = 2; // F / world = 512

// The same pseudo-random values on every rank.
float value(uint64_t seed, uint64_t index, float scale) {
  uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ull + index * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return scale * (static_cast<float>(x % 2001) / 1000.0f - 1.0f);
}

struct Layer {
  std::vector<float> w1, w2, b; // w1: D x F, w2: F x D, b: D (full)
};

int check(int status, const char *what) {
  if (status != 0) {
    std::fprintf(stderr, "%s failed: %s\n", what, symm_last_error());
    std::exit(1);
  }
  return status;
}

uint64_t upload(symm_runtime *rt, const std::vector<float> &host) {
  uint64_t device = symm_device_alloc(rt, host.size() * sizeof(float));
  if (device == 0) {
    std::fprintf(stderr, "device allocation failed: %s\n", symm_last_error());
    std::exit(1);
  }
  check(symm_copy_to_device(device, host.data(), host.size() * sizeof(float)),
        "copy to device");
  return device;
}
} // namespace

int main(int argc, char **argv) {
  symm_runtime *rt = nullptr;
  if (symm_init(&rt) != 0) {
    if (std::strstr(symm_last_error(), "no CUDA device")) {
      std::printf("skipped: no CUDA device (%s)\n", symm_last_error());
      return 0;
    }
    check(-1, "symm_init");
  }
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const int shard = F / world;

  std::vector<float> x(M * D);
  for (int i = 0; i < M * D; ++i) x[i] = value(0, i, 1.0f);
  std::vector<Layer> layers(LAYERS);
  for (int l = 0; l < LAYERS; ++l) {
    layers[l].w1.resize(D * F);
    layers[l].w2.resize(F * D);
    layers[l].b.resize(D);
    for (int i = 0; i < D * F; ++i) layers[l].w1[i] = value(10 + l, i, 0.06f);
    for (int i = 0; i < F * D; ++i) layers[l].w2[i] = value(20 + l, i, 0.03f);
    for (int i = 0; i < D; ++i) layers[l].b[i] = value(30 + l, i, 0.5f);
  }

  // This rank's shards: w1 columns and w2 rows [rank*shard, (rank+1)*shard).
  std::vector<uint64_t> w1(LAYERS), w2(LAYERS), b(LAYERS);
  for (int l = 0; l < LAYERS; ++l) {
    std::vector<float> w1s(D * shard), w2s(shard * D);
    for (int r = 0; r < D; ++r)
      for (int c = 0; c < shard; ++c)
        w1s[r * shard + c] = layers[l].w1[r * F + rank * shard + c];
    for (int r = 0; r < shard; ++r)
      for (int c = 0; c < D; ++c)
        w2s[r * D + c] = layers[l].w2[(rank * shard + r) * D + c];
    w1[l] = upload(rt, w1s);
    w2[l] = upload(rt, w2s);
    b[l] = upload(rt, layers[l].b);
  }
  uint64_t dx = upload(rt, x);
  uint64_t dout = upload(rt, std::vector<float>(M * D, 0.0f));
  auto f = [](uint64_t p) { return reinterpret_cast<float *>(p); };

  auto run = [&] {
    tp_mlp(rt, f(dx), f(w1[0]), f(w2[0]), f(b[0]), f(w1[1]), f(w2[1]), f(b[1]), f(dout));
  };
  run();
  std::vector<float> out(M * D);
  check(symm_copy_to_host(out.data(), dout, out.size() * sizeof(float)), "copy to host");

  // Reference: the unsharded model in double precision.
  std::vector<double> cur(x.begin(), x.end());
  for (int l = 0; l < LAYERS; ++l) {
    std::vector<double> h(M * F, 0.0), next(M * D, 0.0);
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < D; ++k)
        for (int j = 0; j < F; ++j) h[i * F + j] += cur[i * D + k] * layers[l].w1[k * F + j];
    for (double &v : h) v = v > 0 ? v : 0;
    for (int i = 0; i < M; ++i)
      for (int k = 0; k < F; ++k)
        for (int j = 0; j < D; ++j) next[i * D + j] += h[i * F + k] * layers[l].w2[k * D + j];
    for (int i = 0; i < M; ++i)
      for (int j = 0; j < D; ++j) next[i * D + j] += layers[l].b[j] + cur[i * D + j];
    cur = next;
  }
  double worst = 0, scale = 0;
  for (int i = 0; i < M * D; ++i) {
    worst = std::fmax(worst, std::fabs(out[i] - cur[i]));
    scale = std::fmax(scale, std::fabs(cur[i]));
  }
  const double tolerance = 1e-5 * scale;
  const bool pass = worst <= tolerance;

  const int iterations = 200;
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) run();
  double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                  .count() / iterations;

  // The same call captured once into a CUDA graph (the compiled function
  // skips its closing synchronize under capture), replayed into a cleared
  // output: it must reproduce the eager result bit for bit.
  symm_graph *graph = nullptr;
  check(symm_graph_begin(rt), "symm_graph_begin");
  run();
  check(symm_graph_end(rt, &graph), "symm_graph_end");
  const std::vector<float> zeros(M * D, 0.0f);
  check(symm_copy_to_device(dout, zeros.data(), zeros.size() * sizeof(float)), "clear");
  check(symm_graph_replay(rt, graph), "symm_graph_replay");
  check(symm_synchronize(rt), "symm_synchronize");
  std::vector<float> replayed(M * D);
  check(symm_copy_to_host(replayed.data(), dout, replayed.size() * sizeof(float)),
        "copy to host");
  const bool same = std::memcmp(replayed.data(), out.data(), out.size() * sizeof(float)) == 0;
  start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) check(symm_graph_replay(rt, graph), "symm_graph_replay");
  check(symm_synchronize(rt), "symm_synchronize");
  double graph_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      iterations;
  symm_graph_free(graph);

  std::printf("[rank %d/%d] %s tp_mlp: %d layers of %dx%d @ %dx%d (shard %d), max |error| %.3g "
              "(tolerance %.3g, max |value| %.3g), %.1f us per call; graph replay %s eager, "
              "%.1f us per replay\n",
              rank, world, pass && same ? "PASS" : "FAIL", LAYERS, M, D, D, F, shard, worst,
              tolerance, scale, us, same ? "equals" : "DIFFERS FROM", graph_us);
  if (argc > 1 && rank == 0) {
    FILE *file = std::fopen(argv[1], "wb");
    if (!file || std::fwrite(out.data(), sizeof(float), out.size(), file) != out.size()) {
      std::fprintf(stderr, "cannot write %s\n", argv[1]);
      return 1;
    }
    std::fclose(file);
  }
  for (int l = 0; l < LAYERS; ++l) {
    symm_device_free(w1[l]);
    symm_device_free(w2[l]);
    symm_device_free(b[l]);
  }
  symm_device_free(dx);
  symm_device_free(dout);
  symm_finalize(rt);
  return pass && same ? 0 : 1;
}
