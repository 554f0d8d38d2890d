// Accuracy of the math ops in compiled kernels (bench/compiled/math_accuracy.mlir):
// each op runs on the GPU over 65536 inputs of its own domain, and every
// result is compared with the host's double-precision value rounded to
// float. The error is the number of floats between the two (ULP); each op
// must stay within CUDA's published bound for the same function.
//
//   symm-compile bench/compiled/math_accuracy.mlir -o math_accuracy.o
//   c++ -O2 -std=c++17 -I runtime/include -I examples/cpp -I . bench/compiled/math_accuracy.cpp math_accuracy.o \
//       target/release/libsymm_runtime.a -lpthread -ldl -lm -o math_accuracy
//   symm-launch -n 1 ./math_accuracy
#include "math_accuracy.h"

#include "llama_common.h"

namespace {
constexpr int N = 65536;
constexpr int OPS = 10;

struct Op {
  const char *name;
  double (*reference)(double, double);
  // Inputs: x (and y) from [lo, hi], log-uniform when `log_scale`.
  double lo, hi;
  bool log_scale;
  double y_lo, y_hi;
  // CUDA's published maximum error for the float function, in ULP.
  double bound;
};

const Op OPS_TABLE[OPS] = {
    {"exp", [](double x, double) { return std::exp(x); }, -87, 88, false, 0, 0, 2},
    {"exp2", [](double x, double) { return std::exp2(x); }, -125, 127, false, 0, 0, 2},
    {"log", [](double x, double) { return std::log(x); }, 1e-30, 1e30, true, 0, 0, 1},
    {"tanh", [](double x, double) { return std::tanh(x); }, -10, 10, false, 0, 0, 2},
    {"erf", [](double x, double) { return std::erf(x); }, -5, 5, false, 0, 0, 2},
    {"rsqrt", [](double x, double) { return 1.0 / std::sqrt(x); }, 1e-30, 1e30, true, 0, 0, 2},
    {"sqrt", [](double x, double) { return std::sqrt(x); }, 1e-30, 1e30, true, 0, 0, 0},
    {"sin", [](double x, double) { return std::sin(x); }, -8192, 8192, false, 0, 0, 2},
    {"cos", [](double x, double) { return std::cos(x); }, -8192, 8192, false, 0, 0, 2},
    {"powf", [](double x, double y) { return std::pow(x, y); }, 0.01, 100, true, -8, 8, 4},
};

uint64_t mix(uint64_t x) {
  x ^= x >> 31;
  x *= 0x94D049BB133111EBull;
  x ^= x >> 29;
  return x;
}

double uniform(uint64_t seed, uint64_t i) {
  return static_cast<double>(mix(seed * 0x9E3779B97F4A7C15ull + i) >> 11) / 9007199254740992.0;
}

double sample(double lo, double hi, bool log_scale, double u) {
  if (log_scale) return std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo)));
  return lo + u * (hi - lo);
}

// Floats between a and b (both finite): distance on the ordered integer line.
int64_t ulps(float a, float b) {
  auto ordered = [](float f) {
    int32_t i;
    std::memcpy(&i, &f, 4);
    return i < 0 ? static_cast<int64_t>(INT32_MIN) - i : static_cast<int64_t>(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

} // namespace

using llama::check;

// Runs and checks every op; true when all stay within their bounds.
bool check_ops(symm_runtime *rt) {
  llama::Device dx(rt, N * sizeof(float)), dy(rt, N * sizeof(float));
  std::vector<std::unique_ptr<llama::Device>> outs;
  for (int k = 0; k < OPS; ++k) outs.emplace_back(new llama::Device(rt, N * sizeof(float)));
  uint64_t x = dx.ptr, y = dy.ptr, out[OPS];
  for (int k = 0; k < OPS; ++k) out[k] = outs[k]->ptr;
  auto f = [](uint64_t p) { return reinterpret_cast<float *>(p); };
  bool pass = true;
  std::vector<float> hx(N), hy(N), hr(N);
  for (int k = 0; k < OPS; ++k) {
    const Op &op = OPS_TABLE[k];
    for (int i = 0; i < N; ++i) {
      hx[i] = static_cast<float>(sample(op.lo, op.hi, op.log_scale, uniform(2 * k, i)));
      hy[i] = op.y_lo == op.y_hi ? 0.0f
                                 : static_cast<float>(sample(op.y_lo, op.y_hi, false,
                                                             uniform(2 * k + 1, i)));
    }
    check(symm_copy_to_device(x, hx.data(), N * sizeof(float)), "copy x");
    check(symm_copy_to_device(y, hy.data(), N * sizeof(float)), "copy y");
    math_ops(rt, f(x), f(y), f(out[0]), f(out[1]), f(out[2]), f(out[3]), f(out[4]),
             f(out[5]), f(out[6]), f(out[7]), f(out[8]), f(out[9]));
    check(symm_copy_to_host(hr.data(), out[k], N * sizeof(float)), "copy result");
    int64_t worst = 0;
    int at = 0, skipped = 0;
    for (int i = 0; i < N; ++i) {
      double exact = op.reference(hx[i], hy[i]);
      float rounded = static_cast<float>(exact);
      // Outside float's normal range the bound does not apply (CUDA's
      // tables are for full-range results; flushed denormals differ).
      if (!std::isfinite(rounded) || (rounded != 0.0f && std::fabs(rounded) < 1.17549435e-38f)) {
        ++skipped;
        continue;
      }
      if (!std::isfinite(hr[i])) {
        worst = INT64_MAX;
        at = i;
        break;
      }
      int64_t e = ulps(hr[i], rounded);
      if (e > worst) {
        worst = e;
        at = i;
      }
    }
    bool ok = worst <= static_cast<int64_t>(op.bound);
    pass = pass && ok;
    std::printf("%s math.%-5s max %lld ulp (bound %g) at x=%.9g y=%.9g: got %.9g want %.9g; "
                "%d of %d inputs outside the normal range skipped\n",
                ok ? "PASS" : "FAIL", op.name, static_cast<long long>(worst), op.bound,
                hx[at], hy[at], hr[at], static_cast<double>(static_cast<float>(op.reference(hx[at], hy[at]))),
                skipped, N);
  }
  return pass;
}

int main() {
  symm_runtime *rt = llama::join();
  bool pass = check_ops(rt);
  symm_finalize(rt);
  std::printf("%s math accuracy: 10 ops x %d inputs\n", pass ? "PASS" : "FAIL", N);
  return pass ? 0 : 1;
}
