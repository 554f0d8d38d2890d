// What the Llama layer apps share: joining the group, loading bf16 weights
// from raw files (and taking this rank's shard), checking a result against
// a reference computed in f32, timing. C++17, no CUDA toolkit: device
// memory comes from the runtime's C ABI.
#pragma once

#include "symm_runtime.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

namespace llama {

// The examples' symm_mem.max_tokens.
constexpr size_t MAX_TOKENS = 2048;

inline void check(int status, const char *what) {
  if (status != 0) {
    std::fprintf(stderr, "%s failed: %s\n", what, symm_last_error());
    std::exit(1);
  }
}

// Joins the group; without a GPU, says so and exits 0 (CI).
inline symm_runtime *join() {
  symm_runtime *rt = nullptr;
  if (symm_init(&rt) != 0) {
    if (std::strstr(symm_last_error(), "no CUDA device")) {
      std::printf("skipped: no CUDA device (%s)\n", symm_last_error());
      std::exit(0);
    }
    check(-1, "symm_init");
  }
  return rt;
}

inline float bf16_to_float(uint16_t v) {
  uint32_t bits = static_cast<uint32_t>(v) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

// Reads `count` values of `bytes` each from `path`, starting at element
// `offset`; exits with a message if the file is short or missing.
template <typename T>
std::vector<T> read_file(const std::string &path, size_t count, size_t offset = 0) {
  std::vector<T> data(count);
  FILE *f = std::fopen(path.c_str(), "rb");
  if (!f) {
    std::fprintf(stderr, "cannot open %s (make it with bench/model/reference.py)\n", path.c_str());
    std::exit(1);
  }
  if (std::fseek(f, static_cast<long>(offset * sizeof(T)), SEEK_SET) != 0 ||
      std::fread(data.data(), sizeof(T), count, f) != count) {
    std::fprintf(stderr, "%s: shorter than %zu values\n", path.c_str(), offset + count);
    std::exit(1);
  }
  std::fclose(f);
  return data;
}

// Columns [first, first + width) of a row-major rows x columns matrix.
inline std::vector<uint16_t> columns(const std::vector<uint16_t> &m, size_t rows, size_t cols,
                                     size_t first, size_t width) {
  std::vector<uint16_t> out(rows * width);
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(&out[r * width], &m[r * cols + first], width * sizeof(uint16_t));
  return out;
}

// A device buffer owned by the app.
struct Device {
  uint64_t ptr = 0;
  size_t bytes = 0;
  Device(symm_runtime *rt, size_t n) : bytes(n) {
    ptr = symm_device_alloc(rt, n);
    if (ptr == 0) check(-1, "symm_device_alloc");
  }
  template <typename T> Device(symm_runtime *rt, const std::vector<T> &host)
      : Device(rt, host.size() * sizeof(T)) {
    check(symm_copy_to_device(ptr, host.data(), bytes), "copy to device");
  }
  Device(const Device &) = delete;
  Device &operator=(const Device &) = delete;
  ~Device() { symm_device_free(ptr); }
  uint16_t *bf16() const { return reinterpret_cast<uint16_t *>(ptr); }
  // The first `count` bf16 values (all by default).
  std::vector<uint16_t> read(size_t count = 0) const {
    std::vector<uint16_t> host(count ? count : bytes / 2);
    check(symm_copy_to_host(host.data(), ptr, host.size() * 2), "copy to host");
    return host;
  }
};

// Tolerances for a bf16 layer against its f32 reference: each element
// within 2^-6 of its magnitude plus 2^-6 of the reference's RMS (a few bf16
// roundings of the intermediates), and the relative L2 error of the whole
// tensor below 1e-2; `delta` (the layer's own contribution, the output
// minus its residual input) within 2e-2 relative L2. `layers` chained
// layers (each with its own roundings) get that many times the
// element-wise bound.
struct Verdict {
  double rel_l2 = 0, delta_rel_l2 = 0, max_abs = 0, worst_ratio = 0;
  bool pass = false;
};

inline Verdict compare(const std::vector<uint16_t> &got, const std::vector<float> &want,
                       const std::vector<uint16_t> *residual, int layers = 1) {
  Verdict v;
  double sq = 0, err = 0, dsq = 0, derr = 0;
  for (size_t i = 0; i < want.size(); ++i) sq += double(want[i]) * want[i];
  double rms = std::sqrt(sq / want.size());
  bool elementwise = true;
  for (size_t i = 0; i < want.size(); ++i) {
    double g = bf16_to_float(got[i]), w = want[i], e = std::fabs(g - w);
    err += e * e;
    v.max_abs = std::max(v.max_abs, e);
    double limit = layers * (std::ldexp(std::fabs(w), -6) + std::ldexp(rms, -6));
    v.worst_ratio = std::max(v.worst_ratio, e / limit);
    if (!(e <= limit)) elementwise = false;
    if (residual) {
      double r = bf16_to_float((*residual)[i]);
      dsq += (w - r) * (w - r);
      derr += ((g - r) - (w - r)) * ((g - r) - (w - r));
    }
  }
  v.rel_l2 = std::sqrt(err / sq);
  v.delta_rel_l2 = residual ? std::sqrt(derr / dsq) : 0;
  v.pass = elementwise && v.rel_l2 < 1e-2 && (!residual || v.delta_rel_l2 < 2e-2);
  return v;
}

inline void report(const char *what, const Verdict &v) {
  std::printf("%s %s: rel L2 %.3e, layer part rel L2 %.3e, max |err| %.3e "
              "(worst element at %.2f of its bound)\n",
              v.pass ? "PASS" : "FAIL", what, v.rel_l2, v.delta_rel_l2, v.max_abs,
              v.worst_ratio);
}

// Microseconds per call of `body`, over `iterations` after `warmup`.
inline double time_us(int warmup, int iterations, const std::function<void()> &body,
                      const std::function<void()> &finish) {
  for (int i = 0; i < warmup; ++i) body();
  finish();
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iterations; ++i) body();
  finish();
  std::chrono::duration<double, std::micro> spent = std::chrono::steady_clock::now() - start;
  return spent.count() / iterations;
}

struct Timing {
  double sync_us, async_us;
};

// The synchronizing entry point call by call, and the asynchronous one
// enqueued back to back on `stream` (nullptr: the runtime's) with one
// synchronize at the end.
inline Timing time_both(int iterations, const std::function<void()> &sync_call,
                        const std::function<void()> &async_call, symm_runtime *rt,
                        void *stream = nullptr) {
  Timing t;
  t.sync_us = time_us(5, iterations, sync_call, [] {});
  t.async_us = time_us(5, iterations, async_call, [&] {
    check(symm_stream_synchronize(rt, stream), "symm_stream_synchronize");
  });
  return t;
}

// The fault an app plants on request (argv "--plant-fault=sync|async"): a
// device address nothing maps, passed as the input.
inline uint16_t *unmapped() { return reinterpret_cast<uint16_t *>(uintptr_t{0x10}); }

inline std::string flag(int argc, char **argv, const char *name) {
  size_t n = std::strlen(name);
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], name, n) == 0 && argv[i][n] == '=') return argv[i] + n + 1;
  return "";
}

// The stream the asynchronous entry point enqueues on (`*stream`): the
// runtime's, or with --stream=legacy the legacy default stream
// (CU_STREAM_LEGACY, which cannot be captured: the runtime captures the
// call's graphs on its own stream and replays them on the legacy one).
// False, with a message, for any other value.
inline bool async_stream(int argc, char **argv, symm_runtime *rt, void **stream) {
  std::string which = flag(argc, argv, "--stream");
  if (which.empty() || which == "runtime") {
    *stream = symm_stream(rt);
    return true;
  }
  if (which == "legacy") {
    *stream = reinterpret_cast<void *>(uintptr_t{1}); // CU_STREAM_LEGACY
    return true;
  }
  std::fprintf(stderr, "unknown stream '%s' (runtime, legacy)\n", which.c_str());
  return false;
}

// --tokens=1,16,128,2048 (the default).
inline std::vector<size_t> token_counts(int argc, char **argv) {
  std::string list = flag(argc, argv, "--tokens");
  if (list.empty()) return {1, 16, 128, 2048};
  std::vector<size_t> counts;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) counts.push_back(std::stoul(item));
  return counts;
}

// Plants `fault` into one call of `layer(async, tokens, input)` (which
// returns the asynchronous entry point's status) and reports what stopped
// it: "sync" and "async" pass an unmapped input (a kernel faults),
// "too-many-tokens" asks for more tokens than the program takes,
// "misaligned" passes the input 2 bytes past its start (off the 16-byte
// boundary the kernels' vectors need) to the asynchronous entry. Returns
// the exit status: 1 when the failure was reported (the synchronizing entry
// point exits by itself), 2 when it went unnoticed.
inline int plant(symm_runtime *rt, const std::string &fault,
                 const std::function<int(bool, int64_t, uint16_t *)> &layer, uint16_t *input,
                 void *stream = nullptr) {
  std::printf("planting a fault: %s\n", fault.c_str());
  std::fflush(stdout);
  int status = 0;
  if (fault == "sync") {
    layer(false, 16, unmapped());
  } else if (fault == "too-many-tokens") {
    layer(false, 2 * MAX_TOKENS, input);
  } else if (fault == "async") {
    status = layer(true, 16, unmapped());
    if (status == 0) status = symm_stream_synchronize(rt, stream);
  } else if (fault == "misaligned") {
    status = layer(true, 16, input + 1);
    if (status == 0) status = symm_stream_synchronize(rt, stream);
  } else {
    std::fprintf(stderr, "unknown fault '%s' (sync, async, too-many-tokens, misaligned)\n",
                 fault.c_str());
    return 2;
  }
  if (status != 0) {
    std::fprintf(stderr, "the asynchronous call failed: %s\n", symm_last_error());
    return 1;
  }
  std::printf("FAIL: the planted fault went unnoticed\n");
  return 2;
}

} // namespace llama
