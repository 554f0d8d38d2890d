// Runs the compiled examples/llama_attn_out.mlir (a Llama-3-8B attention
// output projection, all-reduce, residual and the next RMSNorm; bf16,
// 2-way tensor parallel) on every rank and checks both outputs against
// bench/model/reference.py's f32 reference; times both entry points.
//
//   symm-compile examples/llama_attn_out.mlir -o llama_attn_out.o
//   c++ -O2 -std=c++17 -I runtime/include -I . examples/cpp/llama_attn_out.cpp
//       llama_attn_out.o target/release/libsymm_runtime.a -lpthread -ldl -lm -o llama_attn_out
//   symm-launch -n 2 ./llama_attn_out DIR [--iterations=N]
#include "llama_attn_out.h"

#include "llama_common.h"

#ifndef LLAMA_M
#define LLAMA_M 128
#endif

using namespace llama;

int main(int argc, char **argv) {
  constexpr size_t M = LLAMA_M, D = 4096;
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  symm_runtime *rt = join();
  if (dir.empty()) {
    std::fprintf(stderr, "usage: llama_attn_out DIR [--iterations=N]\n");
    return 2;
  }
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const size_t heads = D / world; // this rank's attention features

  auto attn = columns(read_file<uint16_t>(dir + "/attn.bin", M * D), M, D, rank * heads, heads);
  auto w_o = read_file<uint16_t>(dir + "/w_o.bin", heads * D, rank * heads * D);
  auto residual_host = read_file<uint16_t>(dir + "/x.bin", M * D);
  std::string m = std::to_string(M);
  auto want_residual = read_file<float>(dir + "/attn_ref_residual_m" + m + ".bin", M * D);
  auto want_normed = read_file<float>(dir + "/attn_ref_normed_m" + m + ".bin", M * D);
  Device a(rt, attn), wo(rt, w_o), residual_in(rt, residual_host);
  Device norm(rt, read_file<uint16_t>(dir + "/norm_weight_2.bin", D));
  Device residual(rt, M * D * 2), normed(rt, M * D * 2);

  llama_attn_out(rt, a.bf16(), wo.bf16(), residual_in.bf16(), norm.bf16(), residual.bf16(),
                 normed.bf16());
  char what[80];
  std::snprintf(what, sizeof what, "llama_attn_out M=%zu residual", M);
  Verdict r = compare(residual.read(), want_residual, &residual_host);
  report(what, r);
  std::snprintf(what, sizeof what, "llama_attn_out M=%zu normed", M);
  Verdict n = compare(normed.read(), want_normed, nullptr);
  report(what, n);

  std::string iterations_flag = flag(argc, argv, "--iterations");
  int iterations = iterations_flag.empty() ? 50 : std::atoi(iterations_flag.c_str());
  double sync_us = time_us(5, iterations, [&] {
    llama_attn_out(rt, a.bf16(), wo.bf16(), residual_in.bf16(), norm.bf16(), residual.bf16(),
                   normed.bf16());
  }, [] {});
  double async_us = time_us(5, iterations, [&] {
    check(llama_attn_out_async(rt, nullptr, a.bf16(), wo.bf16(), residual_in.bf16(), norm.bf16(),
                               residual.bf16(), normed.bf16()),
          "llama_attn_out_async");
  }, [&] { check(symm_stream_synchronize(rt, nullptr), "symm_stream_synchronize"); });
  std::printf("TIME llama_attn_out M=%zu: %.1f us per call synchronizing, %.1f us per "
              "call enqueued back to back\n",
              M, sync_us, async_us);
  symm_finalize(rt);
  return r.pass && n.pass ? 0 : 1;
}
