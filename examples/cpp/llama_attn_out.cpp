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
//
// Fault checks (bench/device/*): --die-after=N (the last rank exits after N
// calls, the others call on and must fail within the peer timeout),
// --late-ms=T (the last rank starts each of 5 calls T ms late: no error
// while T is below the timeout), --skewed-tokens (rank r calls with 16 *
// (r + 1) tokens).
#include "llama_attn_out.h"

#include "llama_common.h"

#include <algorithm>
#include <thread>

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

  const bool last = rank == world - 1;
  if (std::string die = flag(argc, argv, "--die-after"); !die.empty()) {
    int calls = std::atoi(die.c_str());
    for (int i = 0; i < calls; ++i) layer(16);
    if (last) {
      std::printf("dying after %d calls\n", calls);
      std::fflush(stdout);
      std::_Exit(3);
    }
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 10; ++i) layer(16); // exits with the error
    std::printf("FAIL: %.1f s of calls with a dead peer and no error\n",
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    return 2;
  }
  if (std::string late = flag(argc, argv, "--late-ms"); !late.empty()) {
    for (int i = 0; i < 5; ++i) {
      if (last) std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(late.c_str())));
      layer(16);
    }
    std::printf("PASS late peer: 5 calls with the last rank %s ms late each, no error\n",
                late.c_str());
    symm_finalize(rt);
    return 0;
  }
  if (std::string soak = flag(argc, argv, "--soak"); !soak.empty()) {
    // Calls with changing outputs and token counts: 96 argument sets, more
    // than the 64 graphs a function keeps, so the cache evicts throughout.
    long calls = std::atol(soak.c_str());
    std::vector<std::unique_ptr<Device>> outs;
    for (int i = 0; i < 48; ++i) outs.emplace_back(new Device(rt, 64 * D * 2));
    auto rss_kib = [] {
      long pages = 0, resident = 0;
      FILE *f = std::fopen("/proc/self/statm", "r");
      if (f && std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
      if (f) std::fclose(f);
      return resident * 4;
    };
    auto device_free = [&] {
      size_t free = 0, total = 0;
      check(symm_memory_info(rt, &free, &total), "symm_memory_info");
      return free;
    };
    auto run = [&](long i) {
      size_t m = 1 + (i / 48) % 2 * 63; // 1 or 64 tokens
      check(llama_attn_out_async(rt, nullptr, m, a.bf16(), wo.bf16(), residual_in.bf16(), norm.bf16(),
                                 outs[i % 48]->bf16(), normed.bf16()),
            "llama_attn_out_async");
    };
    for (long i = 0; i < 96 * 3; ++i) run(i); // every set seen, the cache full
    check(symm_stream_synchronize(rt, nullptr), "symm_stream_synchronize");
    size_t free_before = device_free();
    long rss_before = rss_kib();
    auto start = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) {
      run(i);
      if (i % 1000 == 999) check(symm_stream_synchronize(rt, nullptr), "symm_stream_synchronize");
    }
    check(symm_stream_synchronize(rt, nullptr), "symm_stream_synchronize");
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    long rss_after = rss_kib();
    size_t free_after = device_free();
    bool flat = free_after + (64 << 20) >= free_before && rss_after <= rss_before + 65536;
    std::printf("%s soak: %ld compiled calls over 96 argument sets (64 graphs kept) in %.1f s; "
                "device free %zu -> %zu MiB, host RSS %ld -> %ld MiB\n",
                flat ? "PASS" : "FAIL", calls, seconds, free_before >> 20, free_after >> 20,
                rss_before >> 10, rss_after >> 10);
    symm_finalize(rt);
    return flat ? 0 : 1;
  }
  if (std::any_of(argv + 1, argv + argc,
                  [](const char *a) { return std::string(a) == "--skewed-tokens"; })) {
    size_t m = 16 * (rank + 1);
    layer(m);
    std::string suffix = "_m" + std::to_string(m) + ".bin";
    std::vector<uint16_t> residual_host(residual_all.begin(), residual_all.begin() + m * D);
    Verdict r = compare(residual.read(m * D),
                        read_file<float>(dir + "/attn_ref_residual" + suffix, m * D), &residual_host);
    std::printf("%s with %zu tokens here and other counts on other ranks: the call %s\n",
                r.pass ? "SILENT" : "WRONG", m, r.pass ? "returned matching data" : "returned wrong data without an error");
    symm_finalize(rt);
    return 2;
  }

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
