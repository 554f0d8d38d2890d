// Checks the compiled all-gather + matmul of agmm_check.mlir on every call:
// the first runs eagerly, the second is captured into a CUDA graph, the
// rest replay it (symm-compile's default). Prints PASS or FAIL per rank.
//
//   symm-compile bench/compiled/agmm_check.mlir -o agmm_check.o
//   c++ -O2 -I runtime/include -I . bench/compiled/agmm_check.cpp agmm_check.o
//       target/release/libsymm_runtime.a -lpthread -ldl -lm -o agmm_check
//   symm-launch -n 2 ./agmm_check
#include "agmm_check.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace {
constexpr int M = 64, K = 32, N = 48, CALLS = 6;

uint16_t bf16(float value) { // exact here: small integers
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return static_cast<uint16_t>(bits >> 16);
}

float shard_value(int rank, int i) { return static_cast<float>((i * 3 + rank * 5) % 4) - 1.0f; }
float b_value(int i) { return static_cast<float>((i * 7) % 4) - 1.0f; }

void check(int status, const char *what) {
  if (status != 0) {
    std::fprintf(stderr, "%s failed: %s\n", what, symm_last_error());
    std::exit(1);
  }
}
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
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  std::vector<uint16_t> a(M * K), b(K * N), expected(world * M * N);
  for (int i = 0; i < M * K; ++i) a[i] = bf16(shard_value(rank, i));
  for (int i = 0; i < K * N; ++i) b[i] = bf16(b_value(i));
  for (int r = 0; r < world; ++r)
    for (int row = 0; row < M; ++row)
      for (int col = 0; col < N; ++col) {
        float sum = 0;
        for (int k = 0; k < K; ++k) sum += shard_value(r, row * K + k) * b_value(k * N + col);
        expected[(r * M + row) * N + col] = bf16(sum);
      }
  uint64_t da = symm_device_alloc(rt, a.size() * 2), db = symm_device_alloc(rt, b.size() * 2),
           dc = symm_device_alloc(rt, expected.size() * 2);
  if (!da || !db || !dc) check(-1, "symm_device_alloc");
  check(symm_copy_to_device(da, a.data(), a.size() * 2), "copy a");
  check(symm_copy_to_device(db, b.data(), b.size() * 2), "copy b");
  std::vector<uint16_t> zeros(expected.size(), 0), got(expected.size());
  int passed = 0;
  for (int call = 0; call < CALLS; ++call) {
    check(symm_copy_to_device(dc, zeros.data(), zeros.size() * 2), "clear c");
    agmm(rt, reinterpret_cast<uint16_t *>(da), reinterpret_cast<uint16_t *>(db),
         reinterpret_cast<uint16_t *>(dc));
    check(symm_copy_to_host(got.data(), dc, got.size() * 2), "copy c");
    passed += got == expected;
  }
  std::printf("[rank %d/%d] %s compiled all_gather_matmul: %d of %d calls (eager, captured, "
              "replays) equal the host reference\n",
              rank, world, passed == CALLS ? "PASS" : "FAIL", passed, CALLS);
  symm_device_free(da);
  symm_device_free(db);
  symm_device_free(dc);
  symm_finalize(rt);
  return passed == CALLS ? 0 : 1;
}
