// Runs the compiled examples/llama_attn_out.mlir (a Llama-3-8B attention
// output projection, all-reduce, residual and the next RMSNorm; bf16,
// 2-way tensor parallel, any token count up to 2048) on every rank and,
// for each token count, checks both outputs against
// bench/model/reference.py's f32 reference and times both entry points.
//
//   symm-compile examples/llama_attn_out.mlir -o llama_attn_out.o
//   c++ -O2 -std=c++17 -I runtime/include -I . examples/cpp/llama_attn_out.cpp
//       llama_attn_out.o target/release/libsymm_runtime.a -lpthread -ldl -lm -o llama_attn_out
//   symm-launch -n 2 ./llama_attn_out DIR [--tokens=1,16,128,2048] [--iterations=N]
#include "llama_attn_out.h"

#include "llama_common.h"

using namespace llama;

int main(int argc, char **argv) {
  constexpr size_t D = 4096;
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  symm_runtime *rt = join();
  if (dir.empty()) {
    std::fprintf(stderr, "usage: llama_attn_out DIR [--tokens=M,...] [--iterations=N]\n");
    return 2;
  }
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const size_t heads = D / world; // this rank's attention features

  auto attn = columns(read_file<uint16_t>(dir + "/attn.bin", MAX_TOKENS * D), MAX_TOKENS, D,
                      rank * heads, heads);
  auto residual_all = read_file<uint16_t>(dir + "/x.bin", MAX_TOKENS * D);
  Device a(rt, attn), wo(rt, read_file<uint16_t>(dir + "/w_o.bin", heads * D, rank * heads * D));
  Device residual_in(rt, residual_all);
  Device norm(rt, read_file<uint16_t>(dir + "/norm_weight_2.bin", D));
  Device residual(rt, MAX_TOKENS * D * 2), normed(rt, MAX_TOKENS * D * 2);
  auto layer = [&](int64_t m) {
    llama_attn_out(rt, m, a.bf16(), wo.bf16(), residual_in.bf16(), norm.bf16(), residual.bf16(),
                   normed.bf16());
  };
  auto layer_async = [&](int64_t m) {
    check(llama_attn_out_async(rt, nullptr, m, a.bf16(), wo.bf16(), residual_in.bf16(),
                               norm.bf16(), residual.bf16(), normed.bf16()),
          "llama_attn_out_async");
  };

  bool pass = true;
  std::string iterations_flag = flag(argc, argv, "--iterations");
  int iterations = iterations_flag.empty() ? 50 : std::atoi(iterations_flag.c_str());
  for (size_t m : token_counts(argc, argv)) {
    layer(m);
    std::string suffix = "_m" + std::to_string(m) + ".bin";
    auto want_residual = read_file<float>(dir + "/attn_ref_residual" + suffix, m * D);
    auto want_normed = read_file<float>(dir + "/attn_ref_normed" + suffix, m * D);
    std::vector<uint16_t> residual_host(residual_all.begin(), residual_all.begin() + m * D);
    char what[80];
    std::snprintf(what, sizeof what, "llama_attn_out M=%zu residual", m);
    Verdict r = compare(residual.read(m * D), want_residual, &residual_host);
    report(what, r);
    std::snprintf(what, sizeof what, "llama_attn_out M=%zu normed", m);
    Verdict n = compare(normed.read(m * D), want_normed, nullptr);
    report(what, n);
    pass = pass && r.pass && n.pass;
    Timing t = time_both(iterations, [&] { layer(m); }, [&] { layer_async(m); }, rt);
    std::printf("TIME llama_attn_out M=%zu: %.1f us per call synchronizing, %.1f us per call "
                "enqueued back to back\n",
                m, t.sync_us, t.async_us);
  }
  symm_finalize(rt);
  return pass ? 0 : 1;
}
