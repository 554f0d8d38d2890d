// Runs the compiled examples/llama_mlp.mlir (a Llama-3-8B MLP block, bf16,
// 2-way tensor parallel, any token count up to 2048) on every rank: loads
// the weights that bench/model/reference.py wrote (each rank takes its
// shard) and, for each token count, checks the output against that
// script's f32 reference, checks that 8 layers chained through the
// asynchronous entry point with one synchronize equal 8 synchronizing
// calls bit for bit, and that the same asynchronous call made three times
// (run, captured into a CUDA graph, replayed) does too, and times both
// entry points. One process serves every count: the runtime keeps a CUDA
// graph per count. --stream=legacy puts the asynchronous calls on the
// legacy default stream (CU_STREAM_LEGACY) instead of the runtime's.
//
//   python3 bench/model/reference.py --out DIR            (on the GPU machine)
//   symm-compile examples/llama_mlp.mlir -o llama_mlp.o
//   c++ -O2 -std=c++17 -I runtime/include -I . examples/cpp/llama_mlp.cpp llama_mlp.o
//       target/release/libsymm_runtime.a -lpthread -ldl -lm -o llama_mlp
//   symm-launch -n 2 ./llama_mlp DIR [--tokens=1,16,128,2048] [--iterations=N]
//                                    [--stream=runtime|legacy]
//                                    [--plant-fault=sync|async|too-many-tokens|misaligned]
//
// Exit status 1 on a failed check (or a planted fault, by design).
#include "llama_mlp.h"

#include "llama_common.h"

using namespace llama;

int main(int argc, char **argv) {
  constexpr size_t D = 4096, F = 14336, LAYERS = 8;
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  symm_runtime *rt = join();
  if (dir.empty()) {
    std::fprintf(stderr, "usage: llama_mlp DIR [--tokens=M,...] [--iterations=N] "
                         "[--stream=runtime|legacy] "
                         "[--plant-fault=sync|async|too-many-tokens|misaligned]\n");
    return 2;
  }
  void *stream = nullptr;
  if (!async_stream(argc, argv, rt, &stream)) return 2;
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const size_t shard = F / world;

  auto x_all = read_file<uint16_t>(dir + "/x.bin", MAX_TOKENS * D);
  auto w_gate = columns(read_file<uint16_t>(dir + "/w_gate.bin", D * F), D, F, rank * shard, shard);
  auto w_up = columns(read_file<uint16_t>(dir + "/w_up.bin", D * F), D, F, rank * shard, shard);
  auto w_down = read_file<uint16_t>(dir + "/w_down.bin", shard * D, rank * shard * D);
  Device x(rt, x_all), norm(rt, read_file<uint16_t>(dir + "/norm_weight.bin", D));
  Device gate(rt, w_gate), up(rt, w_up), down(rt, w_down), out(rt, MAX_TOKENS * D * 2);
  auto layer = [&](int64_t m, uint16_t *in, uint16_t *result) {
    llama_mlp(rt, m, in, norm.bf16(), gate.bf16(), up.bf16(), down.bf16(), result);
  };
  auto layer_async = [&](int64_t m, uint16_t *in, uint16_t *result) {
    return llama_mlp_async(rt, stream, m, in, norm.bf16(), gate.bf16(), up.bf16(), down.bf16(),
                           result);
  };

  std::string fault = flag(argc, argv, "--plant-fault");
  if (!fault.empty()) return plant(rt, fault, [&](bool async, int64_t m, uint16_t *in) {
    return async ? layer_async(m, in, out.bf16()) : (layer(m, in, out.bf16()), 0);
  }, x.bf16(), stream);

  bool pass = true;
  std::string iterations_flag = flag(argc, argv, "--iterations");
  int iterations = iterations_flag.empty() ? 50 : std::atoi(iterations_flag.c_str());
  for (size_t m : token_counts(argc, argv)) {
    layer(m, x.bf16(), out.bf16());
    auto reference = read_file<float>(dir + "/mlp_ref_m" + std::to_string(m) + ".bin", m * D);
    std::vector<uint16_t> residual(x_all.begin(), x_all.begin() + m * D);
    char what[64];
    std::snprintf(what, sizeof what, "llama_mlp M=%zu", m);
    Verdict v = compare(out.read(m * D), reference, &residual);
    report(what, v);
    pass = pass && v.pass;

    // 8 layers (the same weights), each one's output the next one's input:
    // synchronizing calls, then asynchronous calls with one synchronize.
    std::vector<std::unique_ptr<Device>> sync_chain, async_chain;
    for (size_t i = 0; i < LAYERS; ++i) {
      sync_chain.emplace_back(new Device(rt, m * D * 2));
      async_chain.emplace_back(new Device(rt, m * D * 2));
    }
    for (size_t i = 0; i < LAYERS; ++i)
      layer(m, i == 0 ? x.bf16() : sync_chain[i - 1]->bf16(), sync_chain[i]->bf16());
    for (size_t i = 0; i < LAYERS; ++i)
      check(layer_async(m, i == 0 ? x.bf16() : async_chain[i - 1]->bf16(), async_chain[i]->bf16()),
            "llama_mlp_async");
    check(symm_stream_synchronize(rt, stream), "symm_stream_synchronize");
    bool identical = true;
    for (size_t i = 0; i < LAYERS; ++i)
      identical = identical && sync_chain[i]->read() == async_chain[i]->read();
    std::printf("%s llama_mlp M=%zu async chain: %zu layers enqueued with one synchronize %s "
                "%zu synchronizing calls bit for bit\n",
                identical ? "PASS" : "FAIL", m, LAYERS, identical ? "equal" : "DIFFER from", LAYERS);
    pass = pass && identical;

    // The same asynchronous call three times: the runtime runs it, then
    // captures it into a CUDA graph, then replays the graph (a graph per
    // set of arguments); each output equals the synchronizing call's.
    Device again(rt, m * D * 2);
    bool repeated = true;
    for (int i = 0; i < 3; ++i) {
      check(layer_async(m, x.bf16(), again.bf16()), "llama_mlp_async");
      check(symm_stream_synchronize(rt, stream), "symm_stream_synchronize");
      repeated = repeated && again.read() == sync_chain[0]->read();
    }
    std::printf("%s llama_mlp M=%zu async repeat: the call run, captured and replayed %s the "
                "synchronizing call bit for bit\n",
                repeated ? "PASS" : "FAIL", m, repeated ? "equals" : "DIFFERS from");
    pass = pass && repeated;

    Timing t = time_both(iterations, [&] { layer(m, x.bf16(), out.bf16()); },
                         [&] { check(layer_async(m, x.bf16(), out.bf16()), "llama_mlp_async"); },
                         rt, stream);
    std::printf("TIME llama_mlp M=%zu: %.1f us per call synchronizing, %.1f us per call enqueued "
                "back to back\n",
                m, t.sync_us, t.async_us);
  }
  symm_finalize(rt);
  return pass ? 0 : 1;
}
