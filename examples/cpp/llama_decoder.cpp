// Runs the compiled examples/llama_decoder.mlir (the tensor-parallel half of
// a Llama-3-8B decoder layer: o_proj, all-reduce + residual + post-attention
// RMSNorm, the MLP, all-reduce + residual + the next layer's RMSNorm; bf16,
// any token count up to 2048) on every rank: loads the weights that
// bench/model/reference.py wrote (each rank takes its shard) and, for each
// token count, checks both outputs against that script's f32 reference,
// checks that 4 layers chained through the asynchronous entry point (each
// one's residual stream the next one's input) with one synchronize equal 4
// synchronizing calls bit for bit, and times both entry points.
//
//   python3 bench/model/reference.py --out DIR            (on the GPU machine)
//   symm-compile examples/llama_decoder.mlir -o llama_decoder.o
//   c++ -O2 -std=c++17 -I runtime/include -I . examples/cpp/llama_decoder.cpp llama_decoder.o
//       target/release/libsymm_runtime.a -lpthread -ldl -lm -o llama_decoder
//   symm-launch -n 2 ./llama_decoder DIR [--tokens=1,16,128,2048] [--iterations=N]
//
// Exit status 1 on a failed check.
#include "llama_decoder.h"

#include "llama_common.h"

using namespace llama;

int main(int argc, char **argv) {
  constexpr size_t D = 4096, F = 14336, LAYERS = 4;
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  symm_runtime *rt = join();
  if (dir.empty()) {
    std::fprintf(stderr, "usage: llama_decoder DIR [--tokens=M,...] [--iterations=N]\n");
    return 2;
  }
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const size_t heads = D / world, shard = F / world; // this rank's features and columns

  auto residual_all = read_file<uint16_t>(dir + "/x.bin", MAX_TOKENS * D);
  Device attn(rt, columns(read_file<uint16_t>(dir + "/attn.bin", MAX_TOKENS * D), MAX_TOKENS, D,
                          rank * heads, heads));
  Device w_o(rt, read_file<uint16_t>(dir + "/w_o.bin", heads * D, rank * heads * D));
  Device residual_in(rt, residual_all);
  Device post_norm(rt, read_file<uint16_t>(dir + "/norm_weight_2.bin", D));
  Device gate(rt, columns(read_file<uint16_t>(dir + "/w_gate.bin", D * F), D, F, rank * shard, shard));
  Device up(rt, columns(read_file<uint16_t>(dir + "/w_up.bin", D * F), D, F, rank * shard, shard));
  Device down(rt, read_file<uint16_t>(dir + "/w_down.bin", shard * D, rank * shard * D));
  Device next_norm(rt, read_file<uint16_t>(dir + "/norm_weight.bin", D));
  Device out(rt, MAX_TOKENS * D * 2), normed(rt, MAX_TOKENS * D * 2);
  auto layer = [&](int64_t m, uint16_t *in, uint16_t *result, uint16_t *result_normed) {
    llama_decoder(rt, m, attn.bf16(), w_o.bf16(), in, post_norm.bf16(), gate.bf16(), up.bf16(),
                  down.bf16(), next_norm.bf16(), result, result_normed);
  };
  auto layer_async = [&](int64_t m, uint16_t *in, uint16_t *result, uint16_t *result_normed) {
    check(llama_decoder_async(rt, symm_stream(rt), m, attn.bf16(), w_o.bf16(), in,
                              post_norm.bf16(), gate.bf16(), up.bf16(), down.bf16(),
                              next_norm.bf16(), result, result_normed),
          "llama_decoder_async");
  };

  bool pass = true;
  std::string iterations_flag = flag(argc, argv, "--iterations");
  int iterations = iterations_flag.empty() ? 50 : std::atoi(iterations_flag.c_str());
  for (size_t m : token_counts(argc, argv)) {
    layer(m, residual_in.bf16(), out.bf16(), normed.bf16());
    std::string suffix = "_m" + std::to_string(m) + ".bin";
    std::vector<uint16_t> residual_host(residual_all.begin(), residual_all.begin() + m * D);
    char what[80];
    // Two residual blocks (attention output, MLP), each with its roundings.
    std::snprintf(what, sizeof what, "llama_decoder M=%zu out", m);
    Verdict o = compare(out.read(m * D), read_file<float>(dir + "/decoder_ref_out" + suffix, m * D),
                        &residual_host, 2);
    report(what, o);
    std::snprintf(what, sizeof what, "llama_decoder M=%zu normed", m);
    Verdict n = compare(normed.read(m * D),
                        read_file<float>(dir + "/decoder_ref_normed" + suffix, m * D), nullptr, 2);
    report(what, n);
    pass = pass && o.pass && n.pass;

    // LAYERS layers (the same weights and attention output), each one's
    // residual stream the next one's input: synchronizing calls, then
    // asynchronous calls with one synchronize.
    std::vector<std::unique_ptr<Device>> sync_chain, async_chain;
    for (size_t i = 0; i < 2 * LAYERS; ++i) {
      sync_chain.emplace_back(new Device(rt, m * D * 2));
      async_chain.emplace_back(new Device(rt, m * D * 2));
    }
    for (size_t i = 0; i < LAYERS; ++i)
      layer(m, i == 0 ? residual_in.bf16() : sync_chain[2 * i - 2]->bf16(),
            sync_chain[2 * i]->bf16(), sync_chain[2 * i + 1]->bf16());
    for (size_t i = 0; i < LAYERS; ++i)
      layer_async(m, i == 0 ? residual_in.bf16() : async_chain[2 * i - 2]->bf16(),
                  async_chain[2 * i]->bf16(), async_chain[2 * i + 1]->bf16());
    check(symm_stream_synchronize(rt, symm_stream(rt)), "symm_stream_synchronize");
    bool identical = true;
    for (size_t i = 0; i < 2 * LAYERS; ++i)
      identical = identical && sync_chain[i]->read() == async_chain[i]->read();
    std::printf("%s llama_decoder M=%zu async chain: %zu layers enqueued with one synchronize %s "
                "%zu synchronizing calls bit for bit (both outputs)\n",
                identical ? "PASS" : "FAIL", m, LAYERS, identical ? "equal" : "DIFFER from", LAYERS);
    pass = pass && identical;

    Timing t = time_both(
        iterations, [&] { layer(m, residual_in.bf16(), out.bf16(), normed.bf16()); },
        [&] { layer_async(m, residual_in.bf16(), out.bf16(), normed.bf16()); }, rt);
    std::printf("TIME llama_decoder M=%zu: %.1f us per call synchronizing, %.1f us per call "
                "enqueued back to back\n",
                m, t.sync_us, t.async_us);
  }
  symm_finalize(rt);
  return pass ? 0 : 1;
}
