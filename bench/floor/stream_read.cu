// The floor of a decode step: how fast this GPU reads a weight's bytes
// once, by the fastest of a sweep of streaming-read kernels (CUDA C++, an
// anchor beside ours, not part of the compiler):
//   ldg    16-byte vector loads into registers, `unroll` loads in flight per
//          thread, grid-stride over the bytes;
//   bulk   cp.async.bulk copies of `chunk` bytes into a ring of `depth`
//          shared-memory stages, each completing on its own mbarrier (the
//          generated matmul kernels' mechanism; chunk = one weight row of
//          a tile is 128 or 256 bytes there);
//   lgsts  cp.async 16-byte copies by every thread into a ring of `depth`
//          stages (commit groups).
// Every kernel folds what it read into one word per block, so nothing is
// skipped. The buffers are rotated over more than the L2 (each read comes
// from HBM), timed with events over repeated launches, and the best of
// each sweep is printed with its TB/s. cuBLAS reading the same bytes is
// measured beside it by bench/floor/floor.py (torch).
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o stream_read bench/floor/stream_read.cu
//   ./stream_read 176160768 117440512 58720256     (bytes to read; default: these)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "stream_kernels.cuh"

// cp.async (16 bytes per thread per copy) into `depth` stages of
// blockDim.x * 16 * per_thread bytes.
__global__ void lgsts(const int4 *__restrict__ src, size_t vectors, size_t per_block, int depth,
                      int per_thread, unsigned *sink) {
  extern __shared__ __align__(128) int4 ring[];
  size_t begin = size_t(blockIdx.x) * per_block;
  size_t end = vectors < begin + per_block ? vectors : begin + per_block;
  if (begin >= end) return;
  size_t stage_vectors = size_t(blockDim.x) * per_thread;
  size_t stages = (end - begin + stage_vectors - 1) / stage_vectors;
  auto issue = [&](size_t st) {
    int4 *dst = ring + (st % depth) * stage_vectors;
    for (int p = 0; p < per_thread; ++p) {
      size_t v = st * stage_vectors + size_t(p) * blockDim.x + threadIdx.x;
      if (begin + v < end)
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(smem_addr(
                         dst + size_t(p) * blockDim.x + threadIdx.x)),
                     "l"(src + begin + v));
    }
    asm volatile("cp.async.commit_group;");
  };
  for (int st = 0; st < depth - 1; ++st) issue(st);
  unsigned acc = 0;
  for (size_t st = 0; st < stages; ++st) {
    issue(st + depth - 1);
    // Stage st landed once at most depth - 2 newer groups are pending.
    switch (depth) {
      case 4: asm volatile("cp.async.wait_group 2;"); break;
      case 6: asm volatile("cp.async.wait_group 4;"); break;
      default: asm volatile("cp.async.wait_group 6;"); break;
    }
    __syncthreads();
    int4 v = ring[(st % depth) * stage_vectors + threadIdx.x];
    acc ^= v.x;
    __syncthreads();
  }
  asm volatile("cp.async.wait_all;");
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

struct Result {
  double us = 1e30;
  char what[128] = "";
};

int main(int argc, char **argv) {
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::strtoull(argv[i], nullptr, 10));
  if (sizes.empty()) sizes = {176160768, 117440512, 58720256};
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  size_t most = *std::max_element(sizes.begin(), sizes.end());
  // Rotate over enough copies to exceed the L2 several times.
  const int copies = std::max<int>(2, int((512ull << 20) / most) + 1);
  std::vector<char *> bufs(copies);
  for (auto &b : bufs) {
    CHECK(cudaMalloc(&b, most));
    CHECK(cudaMemset(b, 1, most));
  }
  unsigned *sink;
  CHECK(cudaMalloc(&sink, 1 << 20));
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaFuncSetAttribute(bulk<>, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  CHECK(cudaFuncSetAttribute(lgsts, cudaFuncAttributeMaxDynamicSharedMemorySize, 200 * 1024));
  auto time = [&](auto launch) {
    for (int i = 0; i < 3; ++i) launch(bufs[i % copies]);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    const int reps = 20;
    CHECK(cudaEventRecord(start));
    for (int i = 0; i < reps; ++i) launch(bufs[i % copies]);
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    CHECK(cudaGetLastError());
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms * 1000.0 / reps;
  };
  for (size_t bytes : sizes) {
    Result best_ldg, best_bulk, best_lgsts;
    Result bulk_by_chunk[8];
    size_t vectors = bytes / 16;
    for (int blocks : {sms, 2 * sms, 4 * sms, 8 * sms})
      for (int threads : {256, 512, 1024})
        for (int unroll : {2, 4, 8}) {
          auto launch = [&](char *b) {
            const int4 *p = reinterpret_cast<const int4 *>(b);
            if (unroll == 2) ldg<2, StreamingLoad><<<blocks, threads>>>(p, vectors, 0, sink);
            if (unroll == 4) ldg<4, StreamingLoad><<<blocks, threads>>>(p, vectors, 0, sink);
            if (unroll == 8) ldg<8, StreamingLoad><<<blocks, threads>>>(p, vectors, 0, sink);
          };
          double us = time(launch);
          if (us < best_ldg.us) {
            best_ldg.us = us;
            std::snprintf(best_ldg.what, sizeof best_ldg.what,
                          "ldg grid %d x %d threads, %d loads in flight", blocks, threads, unroll);
          }
        }
    int chunks[] = {128, 256, 512, 2048, 8192, 16384};
    for (int ci = 0; ci < 6; ++ci)
      for (int per_sm : {1, 2, 4})
        for (int depth : {4, 8, 16}) {
          int chunk = chunks[ci];
          size_t smem = size_t(depth) * chunk + depth * 8;
          if (smem * per_sm > 220 * 1024 || smem > 200 * 1024) continue;
          int blocks = sms * per_sm;
          size_t per_block = (bytes + blocks - 1) / blocks;
          per_block = (per_block + 15) / 16 * 16;
          double us = time([&](char *b) {
            bulk<<<blocks, 128, smem>>>(b, bytes, per_block, chunk, depth, sink);
          });
          if (us < bulk_by_chunk[ci].us) {
            bulk_by_chunk[ci].us = us;
            std::snprintf(bulk_by_chunk[ci].what, sizeof bulk_by_chunk[ci].what,
                          "bulk %d-byte copies, %d blocks per SM, %d in flight", chunk, per_sm,
                          depth);
          }
          if (us < best_bulk.us) best_bulk = bulk_by_chunk[ci];
        }
    for (int per_sm : {1, 2})
      for (int depth : {4, 6, 8})
        for (int per_thread : {1, 2, 4}) {
          int threads = 256;
          size_t smem = size_t(depth) * threads * per_thread * 16;
          if (smem * per_sm > 220 * 1024 || smem > 200 * 1024) continue;
          int blocks = sms * per_sm;
          size_t per_block = (vectors + blocks - 1) / blocks;
          double us = time([&](char *b) {
            lgsts<<<blocks, threads, smem>>>(reinterpret_cast<const int4 *>(b), vectors,
                                            per_block, depth, per_thread, sink);
          });
          if (us < best_lgsts.us) {
            best_lgsts.us = us;
            std::snprintf(best_lgsts.what, sizeof best_lgsts.what,
                          "cp.async 16-byte copies, %d blocks per SM, %d stages of %d KB", per_sm,
                          depth, int(threads * per_thread * 16 / 1024));
          }
        }
    auto print = [&](const Result &r) {
      std::printf("FLOOR %zu bytes: %8.1f us  %5.2f TB/s  %s\n", bytes, r.us, bytes / r.us / 1e6,
                  r.what);
    };
    print(best_ldg);
    for (auto &r : bulk_by_chunk)
      if (r.what[0]) print(r);
    print(best_lgsts);
    Result best = best_ldg;
    for (const Result *r : {&best_bulk, &best_lgsts})
      if (r->us < best.us) best = *r;
    std::printf("FLOOR-BEST %zu bytes: %.1f us (%.2f TB/s): %s\n", bytes, best.us,
                bytes / best.us / 1e6, best.what);
  }
  return 0;
}
