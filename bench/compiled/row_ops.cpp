// Checks the compiled softmax and LayerNorm of bench/compiled/row_ops.mlir
// (bf16 rows of 4096, f32 statistics, a thread block per row) against a
// host reference in double precision, at 1, 16, 128 and 2048 rows of one
// process (the row count is dynamic), and times them.
//
//   symm-compile bench/compiled/row_ops.mlir -o row_ops.o
//   c++ -O2 -std=c++17 -I runtime/include -I examples/cpp -I . bench/compiled/row_ops.cpp
//       row_ops.o target/release/libsymm_runtime.a -lpthread -ldl -lm -o row_ops
//   symm-launch -n 1 ./row_ops
#include "row_ops.h"

#include "llama_common.h"

using namespace llama;

namespace {
constexpr size_t D = 4096;

uint16_t to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  bits += 0x7FFF + ((bits >> 16) & 1); // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}

double unit(uint64_t seed, uint64_t i) {
  uint64_t x = (seed + 1) * 0x9E3779B97F4A7C15ull + i * 0xBF58476D1CE4E5B9ull;
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return static_cast<double>(x >> 11) / 9007199254740992.0;
}
} // namespace

int main() {
  symm_runtime *rt = join();
  // Logits with a spread like attention scores (and an offset per row, so
  // the max subtraction matters); activations around a nonzero mean.
  std::vector<uint16_t> logits(MAX_TOKENS * D), acts(MAX_TOKENS * D), gamma(D), beta(D);
  for (size_t i = 0; i < MAX_TOKENS * D; ++i) {
    logits[i] = to_bf16(static_cast<float>(8 * unit(1, i) - 4 + 30 * unit(2, i / D)));
    acts[i] = to_bf16(static_cast<float>(3 * unit(3, i) - 1));
  }
  for (size_t j = 0; j < D; ++j) {
    gamma[j] = to_bf16(static_cast<float>(0.5 + unit(4, j)));
    beta[j] = to_bf16(static_cast<float>(unit(5, j) - 0.5));
  }
  Device x(rt, logits), a(rt, acts), g(rt, gamma), b(rt, beta), y(rt, MAX_TOKENS * D * 2);
  bool pass = true;
  for (size_t m : {1, 16, 128, 2048}) {
    softmax(rt, m, x.bf16(), y.bf16());
    std::vector<float> want(m * D);
    for (size_t r = 0; r < m; ++r) {
      double top = -1e300, sum = 0;
      for (size_t j = 0; j < D; ++j) top = std::max(top, bf16_to_float(logits[r * D + j]) + 0.0);
      for (size_t j = 0; j < D; ++j) sum += std::exp(bf16_to_float(logits[r * D + j]) - top);
      for (size_t j = 0; j < D; ++j)
        want[r * D + j] = static_cast<float>(std::exp(bf16_to_float(logits[r * D + j]) - top) / sum);
    }
    char what[64];
    std::snprintf(what, sizeof what, "softmax %zux%zu", m, D);
    Verdict s = compare(y.read(m * D), want, nullptr);
    report(what, s);

    layernorm(rt, m, a.bf16(), g.bf16(), b.bf16(), y.bf16());
    for (size_t r = 0; r < m; ++r) {
      double mean = 0, var = 0;
      for (size_t j = 0; j < D; ++j) mean += bf16_to_float(acts[r * D + j]);
      mean /= D;
      for (size_t j = 0; j < D; ++j) var += std::pow(bf16_to_float(acts[r * D + j]) - mean, 2);
      var /= D;
      for (size_t j = 0; j < D; ++j)
        want[r * D + j] = static_cast<float>((bf16_to_float(acts[r * D + j]) - mean) /
                                                 std::sqrt(var + 1e-5) * bf16_to_float(gamma[j]) +
                                             bf16_to_float(beta[j]));
    }
    std::snprintf(what, sizeof what, "layernorm %zux%zu", m, D);
    Verdict l = compare(y.read(m * D), want, nullptr);
    report(what, l);
    pass = pass && s.pass && l.pass;
    Timing ts = time_both(50, [&] { softmax(rt, m, x.bf16(), y.bf16()); },
                          [&] { check(softmax_async(rt, nullptr, m, x.bf16(), y.bf16()), "softmax"); },
                          rt);
    Timing tl = time_both(50, [&] { layernorm(rt, m, a.bf16(), g.bf16(), b.bf16(), y.bf16()); },
                          [&] {
                            check(layernorm_async(rt, nullptr, m, a.bf16(), g.bf16(), b.bf16(),
                                                  y.bf16()),
                                  "layernorm");
                          },
                          rt);
    std::printf("TIME %zu rows: softmax %.1f us (%.1f enqueued), layernorm %.1f us (%.1f enqueued)\n",
                m, ts.sync_us, ts.async_us, tl.sync_us, tl.async_us);
  }
  symm_finalize(rt);
  return pass ? 0 : 1;
}
