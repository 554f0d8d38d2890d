// Runs the hand-written reduce-scatter kernel of reduce_scatter.mlir and
// checks it. Every rank's input is a deterministic function of (rank,
// element), so each rank computes its expected shard on the host, with no
// communication: the f32 sum over ranks in rank order, rounded to bf16 (to
// nearest even), bit for bit what the kernel must produce; and the error of
// that against the exact (double) sum. Several rounds with new inputs, then
// the time per call of both entry points.
//
//   symm-compile examples/custom_kernel/reduce_scatter.mlir -o reduce_scatter.o
//   c++ -O2 -I runtime/include -I examples/cpp -I . examples/custom_kernel/reduce_scatter.cpp \
//       reduce_scatter.o target/release/libsymm_runtime.a -lpthread -ldl -lm -o reduce_scatter
//   symm-launch -n 2 ./reduce_scatter
#include "llama_common.h"
#include "reduce_scatter.h"

#include <cmath>
#include <cstdio>
#include <vector>

namespace {

constexpr size_t ROWS = 2048, COLS = 4096;

// bf16 of `x`, rounded to nearest even (as cvt.rn.bf16.f32).
uint16_t to_bf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

// Element `i` of rank `rank`'s input in round `round`: values of a few
// units with every bf16 exponent of that range exercised.
uint16_t input(int round, int rank, size_t i) {
  uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull ^ (uint64_t(rank + 1) << 40) ^
               (uint64_t(round + 1) << 52);
  h ^= h >> 29;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 32;
  float x = (float(h % 2000001) - 1000000.0f) / 250000.0f;
  return to_bf16(x);
}

}  // namespace

int main() {
  symm_runtime *rt = llama::join();
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const size_t shard_rows = ROWS / world, shard = shard_rows * COLS;
  llama::Device x(rt, ROWS * COLS * 2), out(rt, shard * 2);

  bool ok = true;
  for (int round = 0; round < 3; ++round) {
    std::vector<uint16_t> mine(ROWS * COLS);
    for (size_t i = 0; i < mine.size(); ++i) mine[i] = input(round, rank, i);
    llama::check(symm_copy_to_device(x.ptr, mine.data(), mine.size() * 2), "copy input");
    reduce_scatter(rt, x.bf16(), out.bf16());
    std::vector<uint16_t> got = out.read();
    size_t mismatches = 0;
    double worst = 0, err2 = 0, ref2 = 0;
    for (size_t e = 0; e < shard; ++e) {
      size_t i = rank * shard + e;
      float sum = 0;
      double exact = 0;
      for (int r = 0; r < world; ++r) {
        float v = llama::bf16_to_float(input(round, r, i));
        sum += v;
        exact += v;
      }
      if (got[e] != to_bf16(sum)) ++mismatches;
      double g = llama::bf16_to_float(got[e]), d = g - exact;
      worst = std::max(worst, std::fabs(d));
      err2 += d * d;
      ref2 += exact * exact;
    }
    std::printf("rank %d round %d: %s: %zu of %zu elements differ from the rank-order f32 sum; "
                "vs exact: rel L2 %.2e, max |err| %.2e\n",
                rank, round, mismatches ? "FAIL" : "PASS", mismatches, shard,
                std::sqrt(err2 / ref2), worst);
    ok = ok && mismatches == 0;
  }

  llama::Timing t = llama::time_both(
      50, [&] { reduce_scatter(rt, x.bf16(), out.bf16()); },
      [&] {
        llama::check(reduce_scatter_async(rt, nullptr, x.bf16(), out.bf16()),
                     "reduce_scatter_async");
      },
      rt);
  std::printf("rank %d: reduce-scatter of %zu x %zu bf16 over %d ranks: %.1f us per call "
              "(synchronizing), %.1f us enqueued back to back\n",
              rank, ROWS, COLS, world, t.sync_us, t.async_us);
  symm_finalize(rt);
  return ok ? 0 : 1;
}
