// A C++ program on symm's C ABI: every rank fills a symmetric buffer with
// its rank + 1, all-reduces it (eagerly, then from a captured CUDA graph)
// and checks the sum. Build (no CUDA toolkit needed):
//
//   cargo build --release -p symm-runtime
//   g++ -std=c++17 examples/cpp/allreduce.cpp -I runtime/include \
//       -L target/release -lsymm_runtime -Wl,-rpath,target/release -o allreduce
//   target/release/symm-launch -n 2 ./allreduce
#include "symm_runtime.h"

#include <cstdio>
#include <vector>

namespace {

int fail(const char *what) {
  std::fprintf(stderr, "%s: %s\n", what, symm_last_error());
  return 1;
}

}  // namespace

int main() {
  symm_runtime *runtime = nullptr;
  if (symm_init(&runtime) != 0) return fail("symm_init");
  const int rank = symm_rank(runtime), world = symm_world_size(runtime);
  const size_t count = 1 << 20;

  symm_buffer *input = nullptr;
  if (symm_alloc(runtime, "example/input", count * sizeof(float), &input) != 0)
    return fail("symm_alloc");
  const uint64_t out = symm_device_alloc(runtime, count * sizeof(float));
  if (out == 0) return fail("symm_device_alloc");

  std::vector<float> host(count, float(rank + 1));
  if (symm_copy_to_device(symm_buffer_ptr(input, rank), host.data(), count * sizeof(float)) != 0)
    return fail("symm_copy_to_device");
  const float expected = float(world * (world + 1) / 2);

  auto check = [&](const char *mode) {
    std::vector<float> result(count);
    if (symm_synchronize(runtime) != 0) return fail("symm_synchronize");
    if (symm_copy_to_host(result.data(), out, count * sizeof(float)) != 0)
      return fail("symm_copy_to_host");
    for (size_t i = 0; i < count; ++i)
      if (result[i] != expected) {
        std::fprintf(stderr, "%s: element %zu is %f, expected %f\n", mode, i, result[i], expected);
        return 1;
      }
    std::printf("rank %d of %d: %s all-reduce of %zu floats = %.0f everywhere\n", rank, world, mode,
                count, expected);
    return 0;
  };

  if (symm_all_reduce(runtime, input, out, count, SYMM_F32, SYMM_SUM, SYMM_ONE_SHOT, nullptr) != 0)
    return fail("symm_all_reduce");
  if (check("eager") != 0) return 1;

  symm_graph *graph = nullptr;
  if (symm_graph_begin(runtime) != 0) return fail("symm_graph_begin");
  if (symm_all_reduce(runtime, input, out, count, SYMM_F32, SYMM_SUM, SYMM_ONE_SHOT, nullptr) != 0)
    return fail("symm_all_reduce (captured)");
  if (symm_graph_end(runtime, &graph) != 0) return fail("symm_graph_end");
  for (int replay = 0; replay < 10; ++replay)
    if (symm_graph_replay(runtime, graph) != 0) return fail("symm_graph_replay");
  if (check("graph-replayed") != 0) return 1;

  symm_graph_free(graph);
  symm_device_free(out);
  symm_free(input);
  symm_finalize(runtime);
  return 0;
}
