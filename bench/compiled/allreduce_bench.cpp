// Times the compiled all-reduces of bench/compiled/allreduce.mlir (see
// gen_allreduce.py): per size, one compiled all-reduce costs
// (t(ar11) - t(ar1)) / 10, eager (each call ends with its synchronize) and
// replayed from a CUDA graph of one call. One JSON line per size on rank 0,
// keys "compiled_<ALGORITHM>_{eager,cg}_us" (ALGORITHM: a -D define naming
// how the object was compiled). The runtime library's all-reduce (the C
// API, symm_all_reduce: one-shot up to 1 MiB, two-shot beyond, as the
// compiler picks by default) is timed the same way in the same process,
// chains of 1 and 11 calls through symmetric buffers: keys
// "library_{eager,cg}_us", so that the two paths compare under one harness.
//
//   python3 bench/compiled/gen_allreduce.py > allreduce.mlir
//   symm-compile allreduce.mlir -o ar.o --one-shot-max-bytes=0   # all two-shot
//   c++ -O2 -DALGORITHM=two_shot -I runtime/include -I . bench/compiled/allreduce_bench.cpp
//       ar.o target/release/libsymm_runtime.a -lpthread -ldl -lm -o bench
//   symm-launch -n 2 ./bench
#include "ar.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#ifndef ALGORITHM
#define ALGORITHM auto
#endif
#define STR2(x) #x
#define STR(x) STR2(x)

namespace {
using Entry = void (*)(symm_runtime *, uint16_t *, uint16_t *);

struct Size {
  long numel;
  Entry one, eleven;
};

#define SIZE(n) Size{n, ar1_##n, ar11_##n}
const Size SIZES[] = {SIZE(64),     SIZE(4096),    SIZE(65536),   SIZE(262144),
                      SIZE(1048576), SIZE(4194304), SIZE(16777216)};

constexpr int ITERS = 200, WARMUP = 20;

void check(int status, const char *what) {
  if (status != 0) {
    std::fprintf(stderr, "%s failed: %s\n", what, symm_last_error());
    std::exit(1);
  }
}

// A bf16 of rank `rank`'s input at `i`: values in [-4, 4), and -0.0 and
// +0.0 one element in 16 each.
uint16_t input_bits(int rank, long i) {
  uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ static_cast<uint32_t>(rank + 1) * 40503u;
  h ^= h >> 13;
  h *= 0x5bd1e995u;
  h ^= h >> 15;
  if (h % 16 == 0) return 0x8000;
  if (h % 16 == 1) return 0x0000;
  float value = (static_cast<float>(h >> 8 & 0xffff) / 65536.0f - 0.5f) * 8.0f;
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

float widen(uint16_t bits) {
  uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value = 0;
  std::memcpy(&value, &wide, sizeof value);
  return value;
}

// f32 to bf16, rounding to nearest even (no NaN here).
uint16_t narrow(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  bits += 0x7fff + (bits >> 16 & 1);
  return static_cast<uint16_t>(bits >> 16);
}

// One all-reduce of every rank's input_bits, twice in a row (both staging
// or Lamport parities), against the sum in rank order in f32, rounded:
// the elements that differ (a sum of -0.0s may come out +0.0).
long wrong_elements(symm_runtime *rt, Entry entry, long numel, uint64_t in, uint64_t out) {
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const size_t bytes = numel * 2;
  std::vector<uint16_t> mine(numel), expected(numel), got(numel);
  for (long i = 0; i < numel; ++i) {
    mine[i] = input_bits(rank, i);
    float sum = widen(input_bits(0, i));
    for (int r = 1; r < world; ++r) sum += widen(input_bits(r, i));
    expected[i] = narrow(sum);
  }
  long wrong = 0;
  for (int call = 0; call < 2; ++call) {
    check(symm_copy_to_device(in, mine.data(), bytes), "copy to device");
    entry(rt, reinterpret_cast<uint16_t *>(in), reinterpret_cast<uint16_t *>(out));
    check(symm_synchronize(rt), "symm_synchronize");
    check(symm_copy_to_host(got.data(), out, bytes), "copy to host");
    for (long i = 0; i < numel; ++i) {
      bool zero = (expected[i] & 0x7fff) == 0 && (got[i] & 0x7fff) == 0;
      wrong += got[i] != expected[i] && !zero;
    }
  }
  return wrong;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Microseconds per run of `call` (which synchronizes when eager), eagerly
// or as replays of a graph of one run.
double time_us(symm_runtime *rt, const std::function<void()> &call, bool graph) {
  for (int i = 0; i < WARMUP; ++i) call(); // also lines the ranks up
  if (!graph) {
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < ITERS; ++i) call();
    return seconds_since(start) * 1e6 / ITERS;
  }
  symm_graph *g = nullptr;
  check(symm_graph_begin(rt), "symm_graph_begin");
  call();
  check(symm_graph_end(rt, &g), "symm_graph_end");
  for (int i = 0; i < WARMUP; ++i) check(symm_graph_replay(rt, g), "replay");
  check(symm_synchronize(rt), "symm_synchronize");
  call(); // eager again: the ranks meet in its kernels
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < ITERS; ++i) check(symm_graph_replay(rt, g), "replay");
  check(symm_synchronize(rt), "symm_synchronize");
  double us = seconds_since(start) * 1e6 / ITERS;
  symm_graph_free(g);
  return us;
}
// bf16 bits of world^11: a chain of 11 all-reduces of ones, exact in bf16
// for 2, 4 and 8 ranks (a power of two).
uint16_t world_pow_11_bits(symm_runtime *rt) {
  float value = 1.0f;
  for (int i = 0; i < 11; ++i) value *= static_cast<float>(symm_world_size(rt));
  uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

// The library's all-reduce as the compiled chains run it: `calls` calls,
// each reducing buffers[i] into buffers[i + 1] (one-shot up to 1 MiB,
// two-shot beyond), on the runtime's stream.
struct LibraryChain {
  symm_runtime *rt;
  std::vector<symm_buffer *> buffers;
  long numel;

  LibraryChain(symm_runtime *rt, long numel) : rt(rt), numel(numel) {
    for (int i = 0; i < 12; ++i) {
      symm_buffer *buffer = nullptr;
      std::string id = "library-chain-" + std::to_string(numel) + "-" + std::to_string(i);
      check(symm_alloc(rt, id.c_str(), numel * 2, &buffer), "symm_alloc");
      buffers.push_back(buffer);
    }
  }
  ~LibraryChain() {
    for (symm_buffer *buffer : buffers) symm_free(buffer);
  }
  uint64_t address(int i) const { return symm_buffer_ptr(buffers[i], symm_rank(rt)); }
  void run(int calls, bool synchronize) const {
    const int algorithm = numel * 2 <= (1 << 20) ? SYMM_ONE_SHOT : SYMM_TWO_SHOT;
    for (int i = 0; i < calls; ++i)
      check(symm_all_reduce(rt, buffers[i], address(i + 1), numel, SYMM_BF16, SYMM_SUM, algorithm,
                            nullptr),
            "symm_all_reduce");
    if (synchronize) check(symm_synchronize(rt), "symm_synchronize");
  }
};
} // namespace

int main() {
  symm_runtime *rt = nullptr;
  if (symm_init(&rt) != 0) {
    if (std::strstr(symm_last_error(), "no CUDA device")) {
      std::printf("skipped: no CUDA device\n");
      return 0;
    }
    check(-1, "symm_init");
  }
  const int rank = symm_rank(rt);
  for (const Size &size : SIZES) {
    const size_t bytes = size.numel * 2;
    uint64_t in = symm_device_alloc(rt, bytes), out = symm_device_alloc(rt, bytes);
    if (!in || !out) check(-1, "symm_device_alloc");
    const long wrong = wrong_elements(rt, size.one, size.numel, in, out);
    // bf16 1.0 everywhere: sums stay exact through the chain of 11.
    std::vector<uint16_t> ones(size.numel, 0x3f80);
    check(symm_copy_to_device(in, ones.data(), bytes), "copy to device");
    auto *pin = reinterpret_cast<uint16_t *>(in);
    auto *pout = reinterpret_cast<uint16_t *>(out);
    char line[1024];
    int n = std::snprintf(line, sizeof line, "{\"numel\": %ld, \"bytes\": %zu, \"wrong_elements\": %ld",
                          size.numel, bytes, wrong);
    for (bool graph : {false, true}) {
      double one = time_us(rt, [&] { size.one(rt, pin, pout); }, graph);
      double eleven = time_us(rt, [&] { size.eleven(rt, pin, pout); }, graph);
      n += std::snprintf(line + n, sizeof line - n,
                         ", \"compiled_%s_%s_us\": %.2f, \"call_ar1_%s_us\": %.2f", STR(ALGORITHM),
                         graph ? "cg" : "eager", (eleven - one) / 10, graph ? "cg" : "eager", one);
    }
    // The library's all-reduce, the same way; then a chain of 11 on ones,
    // checked like the compiled chain below.
    bool library_right = true;
    {
      LibraryChain chain(rt, size.numel);
      std::vector<uint16_t> ones(size.numel, 0x3f80);
      check(symm_copy_to_device(chain.address(0), ones.data(), bytes), "copy to device");
      for (bool graph : {false, true}) {
        double one = time_us(rt, [&] { chain.run(1, !graph); }, graph);
        double eleven = time_us(rt, [&] { chain.run(11, !graph); }, graph);
        n += std::snprintf(line + n, sizeof line - n, ", \"library_%s_us\": %.2f",
                           graph ? "cg" : "eager", (eleven - one) / 10);
      }
      check(symm_copy_to_device(chain.address(0), ones.data(), bytes), "copy to device");
      chain.run(11, true);
      std::vector<uint16_t> got(size.numel);
      check(symm_copy_to_host(got.data(), chain.address(11), bytes), "copy to host");
      for (uint16_t v : got) library_right = library_right && v == world_pow_11_bits(rt);
    }
    // The last compiled call was ar11: out holds world^11 on every element.
    const uint16_t expected = world_pow_11_bits(rt);
    std::vector<uint16_t> got(size.numel);
    check(symm_copy_to_host(got.data(), out, bytes), "copy to host");
    bool right = true;
    for (uint16_t v : got) right = right && v == expected;
    right = right && wrong == 0;
    std::snprintf(line + n, sizeof line - n, ", \"result_correct\": %s, \"library_correct\": %s}",
                  right ? "true" : "false", library_right ? "true" : "false");
    if (rank == 0) std::printf("%s\n", line);
    symm_device_free(in);
    symm_device_free(out);
  }
  symm_finalize(rt);
  return 0;
}
