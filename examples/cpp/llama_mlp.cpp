// Runs the compiled examples/llama_mlp.mlir (a Llama-3-8B MLP block, bf16,
// 2-way tensor parallel) on every rank: loads the weights that
// bench/model/reference.py wrote (each rank takes its shard), checks the
// output against that script's f32 reference, checks that 8 layers chained
// through the asynchronous entry point with one synchronize equal 8
// synchronizing calls bit for bit, and times both entry points.
//
//   python3 bench/model/reference.py --out DIR            (on the GPU machine)
//   symm-compile examples/llama_mlp.mlir -o llama_mlp.o
//   c++ -O2 -std=c++17 -I runtime/include -I . examples/cpp/llama_mlp.cpp llama_mlp.o
//       target/release/libsymm_runtime.a -lpthread -ldl -lm -o llama_mlp
//   symm-launch -n 2 ./llama_mlp DIR [--plant-fault=sync|async] [--iterations=N]
//
// -DLLAMA_M=.. builds it for a copy of the example with another token
// count. Exit status 1 on a failed check (or a planted fault, by design).
#include "llama_mlp.h"

#include "llama_common.h"

#ifndef LLAMA_M
#define LLAMA_M 128
#endif

using namespace llama;

int main(int argc, char **argv) {
  constexpr size_t M = LLAMA_M, D = 4096, F = 14336, LAYERS = 8;
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  symm_runtime *rt = join();
  if (dir.empty()) {
    std::fprintf(stderr, "usage: llama_mlp DIR [--plant-fault=sync|async] [--iterations=N]\n");
    return 2;
  }
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const size_t shard = F / world;

  auto x_host = read_file<uint16_t>(dir + "/x.bin", M * D);
  auto w_gate = columns(read_file<uint16_t>(dir + "/w_gate.bin", D * F), D, F, rank * shard, shard);
  auto w_up = columns(read_file<uint16_t>(dir + "/w_up.bin", D * F), D, F, rank * shard, shard);
  auto w_down = read_file<uint16_t>(dir + "/w_down.bin", shard * D, rank * shard * D);
  auto reference = read_file<float>(dir + "/mlp_ref_m" + std::to_string(M) + ".bin", M * D);
  Device x(rt, x_host), norm(rt, read_file<uint16_t>(dir + "/norm_weight.bin", D));
  Device gate(rt, w_gate), up(rt, w_up), down(rt, w_down), out(rt, M * D * 2);

  std::string fault = flag(argc, argv, "--plant-fault");
  if (fault == "sync") {
    std::printf("planting a fault: the input is an unmapped address\n");
    std::fflush(stdout);
    llama_mlp(rt, unmapped(), norm.bf16(), gate.bf16(), up.bf16(), down.bf16(), out.bf16());
    std::printf("FAIL: the planted fault went unnoticed\n");
    return 2;
  }
  if (fault == "async") {
    int status = llama_mlp_async(rt, nullptr, unmapped(), norm.bf16(), gate.bf16(), up.bf16(),
                                 down.bf16(), out.bf16());
    if (status == 0) status = symm_stream_synchronize(rt, nullptr);
    if (status != 0) {
      std::fprintf(stderr, "the asynchronous call failed: %s\n", symm_last_error());
      return 1;
    }
    std::printf("FAIL: the planted fault went unnoticed\n");
    return 2;
  }

  bool pass = true;
  llama_mlp(rt, x.bf16(), norm.bf16(), gate.bf16(), up.bf16(), down.bf16(), out.bf16());
  Verdict v = compare(out.read(), reference, &x_host);
  char what[64];
  std::snprintf(what, sizeof what, "llama_mlp M=%zu", M);
  report(what, v);
  pass = pass && v.pass;

  // 8 layers (the same weights), each one's output the next one's input:
  // synchronizing calls, then asynchronous calls with one synchronize.
  std::vector<Device *> sync_chain, async_chain;
  for (size_t i = 0; i <= LAYERS; ++i) {
    sync_chain.push_back(i == 0 ? nullptr : new Device(rt, M * D * 2));
    async_chain.push_back(i == 0 ? nullptr : new Device(rt, M * D * 2));
  }
  auto input = [&](std::vector<Device *> &chain, size_t i) {
    return i == 0 ? x.bf16() : chain[i]->bf16();
  };
  for (size_t i = 0; i < LAYERS; ++i)
    llama_mlp(rt, input(sync_chain, i), norm.bf16(), gate.bf16(), up.bf16(), down.bf16(),
              sync_chain[i + 1]->bf16());
  for (size_t i = 0; i < LAYERS; ++i)
    check(llama_mlp_async(rt, symm_stream(rt), input(async_chain, i), norm.bf16(), gate.bf16(),
                          up.bf16(), down.bf16(), async_chain[i + 1]->bf16()),
          "llama_mlp_async");
  check(symm_stream_synchronize(rt, symm_stream(rt)), "symm_stream_synchronize");
  bool identical = true;
  for (size_t i = 1; i <= LAYERS; ++i)
    identical = identical && sync_chain[i]->read() == async_chain[i]->read();
  std::printf("%s async chain: %zu layers enqueued with one synchronize %s %zu "
              "synchronizing calls bit for bit\n",
              identical ? "PASS" : "FAIL", LAYERS, identical ? "equal" : "DIFFER from",
              LAYERS);
  pass = pass && identical;
  for (auto *d : sync_chain) delete d;
  for (auto *d : async_chain) delete d;

  std::string iterations_flag = flag(argc, argv, "--iterations");
  int iterations = iterations_flag.empty() ? 50 : std::atoi(iterations_flag.c_str());
  double sync_us = time_us(5, iterations, [&] {
    llama_mlp(rt, x.bf16(), norm.bf16(), gate.bf16(), up.bf16(), down.bf16(), out.bf16());
  }, [] {});
  double async_us = time_us(5, iterations, [&] {
    check(llama_mlp_async(rt, nullptr, x.bf16(), norm.bf16(), gate.bf16(), up.bf16(),
                          down.bf16(), out.bf16()),
          "llama_mlp_async");
  }, [&] { check(symm_stream_synchronize(rt, nullptr), "symm_stream_synchronize"); });
  std::printf("TIME llama_mlp M=%zu: %.1f us per call synchronizing, %.1f us per call "
              "enqueued back to back\n",
              M, sync_us, async_us);
  symm_finalize(rt);
  return pass ? 0 : 1;
}
