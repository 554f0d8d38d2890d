// Runs the compiled examples/partitioned.mlir (two Llama-3-8B MLP blocks,
// bf16, 2-way tensor parallel, with a host step between them) on every
// rank: two CUDA-graph partitions with an eager fallback region between.
// The check covers the first block's output and the host's scale (both in
// the pinned buffers the program fills) as well as the final output.
//
// For each token count (1, 16, 128) it calls the program with a new input
// every call, the same buffers (so the graphs replay), and checks every
// output against bench/model/reference.py's f32 reference. Then it checks
// what the runtime counted: one capture per partition per set of
// arguments, no symmetric buffer in any graph's memory, device memory flat
// over 1000 calls; and times a call. SYMM_CUDA_GRAPHS=0 runs it all eagerly.
//
//   python3 bench/model/reference.py --out DIR --partitioned   (GPU machine)
//   symm-compile examples/partitioned.mlir -o partitioned.o
//   c++ -O2 -std=c++17 -I runtime/include -I . -I examples/cpp examples/cpp/partitioned.cpp
//       partitioned.o target/release/libsymm_runtime.a -lpthread -ldl -lm -o partitioned
//   symm-launch -n 2 ./partitioned DIR [--tokens=1,16,128] [--iterations=N]
//
// Exit status 1 on a failed check.
#include "partitioned.h"

#include "llama_common.h"

#include <map>

using namespace llama;

// The partitions of examples/partitioned.mlir (its cudagraph-partition
// remark: "runs 2 CUDA-graph partitions between fallback regions").
constexpr uint64_t PARTITIONS = 2;

int main(int argc, char **argv) {
  constexpr size_t D = 4096, F = 14336;
  std::string dir = argc > 1 && argv[1][0] != '-' ? argv[1] : "";
  symm_runtime *rt = join();
  if (dir.empty()) {
    std::fprintf(stderr, "usage: partitioned DIR [--iterations=N]\n");
    return 2;
  }
  const int rank = symm_rank(rt), world = symm_world_size(rt);
  const size_t shard = F / world;
  const char *graphs = std::getenv("SYMM_CUDA_GRAPHS");
  const bool graphs_on = !(graphs && std::string(graphs) == "0");

  auto w_gate = columns(read_file<uint16_t>(dir + "/w_gate.bin", D * F), D, F, rank * shard, shard);
  auto w_up = columns(read_file<uint16_t>(dir + "/w_up.bin", D * F), D, F, rank * shard, shard);
  auto w_down = read_file<uint16_t>(dir + "/w_down.bin", shard * D, rank * shard * D);
  Device norm(rt, read_file<uint16_t>(dir + "/norm_weight.bin", D));
  Device gate(rt, w_gate), up(rt, w_up), down(rt, w_down);
  Device x(rt, MAX_TOKENS * D * 2), out(rt, MAX_TOKENS * D * 2);
  // The host step's buffers: the application's pinned memory.
  auto *h_host = static_cast<uint16_t *>(symm_host_alloc(rt, MAX_TOKENS * D * 2));
  auto *scale_host = static_cast<float *>(symm_host_alloc(rt, sizeof(float)));
  if (!h_host || !scale_host) check(-1, "symm_host_alloc");
  auto call = [&](int64_t m) {
    partitioned(rt, m, x.bf16(), norm.bf16(), gate.bf16(), up.bf16(), down.bf16(), h_host,
                scale_host, out.bf16());
  };
  auto call_async = [&](int64_t m) {
    check(partitioned_async(rt, symm_stream(rt), m, x.bf16(), norm.bf16(), gate.bf16(),
                            up.bf16(), down.bf16(), h_host, scale_host, out.bf16()),
          "partitioned_async");
  };

  bool pass = true;
  // Calls per token count (bench/model/reference.py's PARTITIONED_CALLS);
  // --tokens picks which, in order.
  const std::map<size_t, size_t> available = {{1, 10}, {16, 100}, {128, 10}};
  std::vector<std::pair<size_t, size_t>> calls;
  std::string tokens_flag = flag(argc, argv, "--tokens");
  for (size_t m : tokens_flag.empty() ? std::vector<size_t>{1, 16, 128} : token_counts(argc, argv)) {
    if (!available.count(m)) {
      std::fprintf(stderr, "no reference for %zu tokens (1, 16, 128)\n", m);
      return 2;
    }
    calls.emplace_back(m, available.at(m));
  }
  for (auto [m, n] : calls) {
    auto inputs = read_file<uint16_t>(dir + "/x_calls_m" + std::to_string(m) + ".bin", n * m * D);
    auto h_refs = read_file<float>(dir + "/partitioned_h_m" + std::to_string(m) + ".bin", n * m * D);
    auto scales = read_file<float>(dir + "/partitioned_scale_m" + std::to_string(m) + ".bin", n);
    auto refs = read_file<float>(dir + "/partitioned_ref_m" + std::to_string(m) + ".bin", n * m * D);
    size_t passed = 0;
    double worst_l2 = 0, worst_ratio = 0, worst_h_l2 = 0, worst_scale = 0;
    for (size_t k = 0; k < n; ++k) {
      std::vector<uint16_t> input(inputs.begin() + k * m * D, inputs.begin() + (k + 1) * m * D);
      check(symm_copy_to_device(x.ptr, input.data(), m * D * 2), "copy to device");
      call(m);
      // The host step's inputs and result are in the pinned buffers: the
      // first partition's output and the scale the host computed.
      std::vector<uint16_t> h(h_host, h_host + m * D);
      std::vector<float> want_h(h_refs.begin() + k * m * D, h_refs.begin() + (k + 1) * m * D);
      Verdict vh = compare(h, want_h, nullptr);
      double scale_error = std::fabs(*scale_host - scales[k]) / scales[k];
      std::vector<float> want(refs.begin() + k * m * D, refs.begin() + (k + 1) * m * D);
      // Two blocks chained: twice one block's element-wise bound.
      Verdict v = compare(out.read(m * D), want, nullptr, 2);
      bool ok = v.pass && vh.pass && scale_error < 1e-2;
      if (!ok && passed == k) {
        char what[96];
        std::snprintf(what, sizeof what, "partitioned M=%zu call %zu (scale %.6g, want %.6g)", m,
                      k, *scale_host, scales[k]);
        report((std::string(what) + " block 1").c_str(), vh);
        report((std::string(what) + " output").c_str(), v);
      }
      passed += ok;
      worst_l2 = std::max(worst_l2, v.rel_l2);
      worst_h_l2 = std::max(worst_h_l2, vh.rel_l2);
      worst_scale = std::max(worst_scale, scale_error);
      worst_ratio = std::max(worst_ratio, std::max(v.worst_ratio, vh.worst_ratio));
    }
    bool ok = passed == n;
    std::printf("%s partitioned M=%zu rank %d: %zu of %zu calls with changing inputs match the "
                "reference (worst rel L2: block 1 %.3e, output %.3e; host scale within %.1e; "
                "worst element at %.2f of its bound)\n",
                ok ? "PASS" : "FAIL", m, rank, passed, n, worst_h_l2, worst_l2, worst_scale,
                worst_ratio);
    pass = pass && ok;
  }

  symm_graph_stats stats{};
  check(symm_compiled_graph_stats(rt, &stats), "symm_compiled_graph_stats");
  // Each token count is one set of arguments (the same buffers); each was
  // called at least twice, so each partition was captured once per count.
  const uint64_t expected = graphs_on ? PARTITIONS * calls.size() : 0;
  bool captures_ok = stats.captures == expected;
  std::printf("%s captures rank %d: %llu captured, %llu replays; expected %llu (%llu partitions x "
              "%zu argument sets%s)\n",
              captures_ok ? "PASS" : "FAIL", rank, (unsigned long long)stats.captures,
              (unsigned long long)stats.replays, (unsigned long long)expected,
              (unsigned long long)PARTITIONS, calls.size(), graphs_on ? "" : ", graphs off");
  std::printf("%s graph buffers rank %d: %llu buffers, %.1f MB, %llu in a symmetric pool\n",
              stats.symmetric_buffers == 0 ? "PASS" : "FAIL", rank,
              (unsigned long long)stats.buffers, stats.buffer_bytes / 1e6,
              (unsigned long long)stats.symmetric_buffers);
  pass = pass && captures_ok && stats.symmetric_buffers == 0;

  // Device memory across 1000 calls, after the calls above and a few
  // asynchronous ones made everything.
  size_t free_before = 0, free_after = 0, total = 0;
  for (int i = 0; i < 10; ++i) call_async(calls.front().first);
  check(symm_stream_synchronize(rt, nullptr), "symm_stream_synchronize");
  check(symm_memory_info(rt, &free_before, &total), "symm_memory_info");
  for (int i = 0; i < 1000; ++i) call_async(calls.front().first);
  check(symm_stream_synchronize(rt, nullptr), "symm_stream_synchronize");
  check(symm_memory_info(rt, &free_after, &total), "symm_memory_info");
  bool flat = free_after == free_before;
  std::printf("%s memory rank %d: %zu bytes free before 1000 calls, %zu after\n",
              flat ? "PASS" : "FAIL", rank, free_before, free_after);
  pass = pass && flat;

  std::string iterations_flag = flag(argc, argv, "--iterations");
  int iterations = iterations_flag.empty() ? 50 : std::atoi(iterations_flag.c_str());
  for (auto [m, n] : calls) {
    (void)n;
    Timing t = time_both(iterations, [&] { call(m); }, [&] { call_async(m); }, rt);
    std::printf("TIME partitioned M=%zu graphs %s: %.1f us per call synchronizing, %.1f us per "
                "call enqueued back to back\n",
                m, graphs_on ? "on" : "off", t.sync_us, t.async_us);
  }
  symm_host_free(h_host);
  symm_host_free(scale_host);
  symm_finalize(rt);
  return pass ? 0 : 1;
}
