// Probe (issue 32): how fast HBM delivers a [K, N] row-major weight when
// it is read in column bands `width` bytes wide (a matmul kernel's column
// tile), each warp instruction covering 512 / width rows of its band,
// against reading it front to back. Answers whether a skinny matmul's
// column tile must be wider than 128 bytes to reach the floor. With `long`:
// the GEMVs' block shape (one block per 128-byte band over its whole K
// range, or half of it), the weight as it is and packed band-major
// ([bands][K][128 bytes]: each band contiguous, as a load-time repacking
// would lay it out). With `streamk`: a grid of a few blocks per SM, the
// bands' rows laid end to end and cut evenly between the blocks (a block
// takes the end of one band and the start of the next), against `long`'s
// one block per band. With `hints`: the GEMVs' block shapes with each
// load flavour (cache-streaming, L1::no_allocate, and the L2 prefetch
// sizes 128B / 256B).
//   nvcc -O3 -arch=sm_90a -o /tmp/tile_read bench/gemv_probe/tile_read.cu && /tmp/tile_read
#include <cuda_runtime.h>
#include <cstdio>
#include <string>
#include <vector>

template <int U, bool PACKED = false>
__global__ void __launch_bounds__(1024) band(const int4 *__restrict__ src, int rows, int row_vecs, int width_vecs,
                     int rows_per_block, unsigned *sink) {
  const int lanes_per_row = width_vecs < 32 ? width_vecs : 32;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int chunk = lane % lanes_per_row, sub = lane / lanes_per_row, per_instr = 32 / lanes_per_row;
  const int band0 = blockIdx.x * width_vecs;
  const int r0 = blockIdx.y * rows_per_block;
  int acc = 0;
  // Each warp takes rows r0 + (warp * per_instr + sub) + i * warps * per_instr, and for
  // bands wider than 512 bytes every 32-vector piece of the band.
  for (int piece = 0; piece < width_vecs; piece += lanes_per_row) {
    for (int r = r0 + warp * per_instr + sub; r < r0 + rows_per_block && r < rows;
         r += U * warps * per_instr) {
      int4 v[U];
#pragma unroll
      for (int u = 0; u < U; ++u) {
        int rr = r + u * warps * per_instr;
        v[u] = rr < r0 + rows_per_block && rr < rows
                   ? __ldcs(PACKED ? src + ((size_t)blockIdx.x * rows + rr) * width_vecs + piece + chunk
                                   : src + (size_t)rr * row_vecs + band0 + piece + chunk)
                   : make_int4(0, 0, 0, 0);
      }
#pragma unroll
      for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    }
  }
  if (acc == 0x12345678) sink[blockIdx.x] = acc;
}

// µs per launch of `launch(buffer)` over `bufs` in turn (3 warm-up
// launches, then `reps` timed by events).
template <class Launch>
static double us_per_call(const Launch &launch, const std::vector<int4 *> &bufs, int reps) {
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int i = 0; i < 3; ++i) launch(bufs[i % bufs.size()]);
  cudaEventRecord(a);
  for (int i = 0; i < reps; ++i) launch(bufs[i % bufs.size()]);
  cudaEventRecord(b);
  cudaEventSynchronize(b);
  float ms;
  cudaEventElapsedTime(&ms, a, b);
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return ms * 1000 / reps;
}

// `copies` buffers of `bytes` each (set to 1s), read in turn so that
// every launch reads past L2.
static std::vector<int4 *> weight_copies(size_t bytes, int copies = 6) {
  std::vector<int4 *> bufs(copies);
  for (auto &p : bufs) { cudaMalloc(&p, bytes); cudaMemset(p, 1, bytes); }
  return bufs;
}

static void free_all(const std::vector<int4 *> &bufs) {
  for (auto p : bufs) cudaFree(p);
}

// One 16-byte load of `p` in the flavour `H`: 0 `ld.global.cs` (__ldcs),
// 1 `ld.global.L1::no_allocate` (the generated GEMVs' load), 2 and 3 the
// same with the L2 prefetch size `L2::128B` / `L2::256B` (an L2 miss
// fetches that many bytes around the line), 4 `ld.global.nc` with
// `L2::256B`.
template <int H>
__device__ __forceinline__ int4 load_hint(const int4 *p) {
  int4 v;
  if constexpr (H == 0) {
    v = __ldcs(p);
  } else if constexpr (H == 1) {
    asm volatile("ld.global.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else if constexpr (H == 2) {
    asm volatile("ld.global.L1::no_allocate.L2::128B.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else if constexpr (H == 3) {
    asm volatile("ld.global.L1::no_allocate.L2::256B.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  } else {
    asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  }
  return v;
}

// Reads rows [r0, r1) of 128-byte band `bi` (8 lanes a row, 4 rows a warp
// instruction), U loads of flavour H (`load_hint`) in flight per lane.
template <int U, int H = 0>
__device__ int read_band_rows(const int4 *__restrict__ src, int row_vecs, int bi, int r0, int r1) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, warps = blockDim.x >> 5;
  const int chunk = lane & 7, sub = lane >> 3, stride = warps * 4;
  int acc = 0;
  for (int r = r0 + warp * 4 + sub; r < r1; r += U * stride) {
    int4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      int rr = r + u * stride;
      v[u] = rr < r1 ? load_hint<H>(src + (size_t)rr * row_vecs + bi * 8 + chunk) : make_int4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < U; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  return acc;
}

// Stream-K: the bands' rows end to end, block b takes [b, b + 1) * total / gridDim.x.
template <int U>
__global__ void __launch_bounds__(1024) streamk(const int4 *__restrict__ src, int rows, int row_vecs, int bands,
                                                unsigned *sink) {
  const long long total = (long long)bands * rows;
  const long long g0 = total * blockIdx.x / gridDim.x, g1 = total * (blockIdx.x + 1) / gridDim.x;
  int acc = 0;
  for (long long g = g0; g < g1;) {
    const int bi = (int)(g / rows), r0 = (int)(g % rows);
    const long long end = (long long)(bi + 1) * rows < g1 ? (long long)(bi + 1) * rows : g1;
    acc ^= read_band_rows<U>(src, row_vecs, bi, r0, r0 + (int)(end - g));
    g = end;
  }
  if (acc == 0x12345678) sink[blockIdx.x] = acc;
}

// `streamk` mode: grids of 1-3 blocks per SM against one block per band.
static void streamk_sweep(int rows, int cols, const char *name, unsigned *sink) {
  const int row_vecs = cols / 8, bands = row_vecs / 8;
  const size_t bytes = (size_t)rows * cols * 2;
  const std::vector<int4 *> bufs = weight_copies(bytes);
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  for (int grid : {bands, sms, 2 * sms, 3 * sms, 4 * sms})
    for (int threads : {256, 512, 1024})
      for (int unroll : {4, 8}) {
        if (grid * threads > 2048 * sms || (grid == bands && threads != 1024)) continue;
        auto launch = [&](const int4 *p) {
          if (unroll == 4) streamk<4><<<grid, threads>>>(p, rows, row_vecs, bands, sink);
          if (unroll == 8) streamk<8><<<grid, threads>>>(p, rows, row_vecs, bands, sink);
        };
        const double us = us_per_call(launch, bufs, 30);
        printf("%s, stream-K over %d bands: %d blocks, %d threads, %d in flight: %.1f us %.2f TB/s\n", name, bands,
               grid, threads, unroll, us, bytes / us / 1e6);
      }
  free_all(bufs);
}


// `hints` mode: 128-byte bands (8 lanes a row, 4 rows a warp
// instruction), K split `gridDim.y` ways, U loads of flavour H in flight.
template <int U, int H>
__global__ void __launch_bounds__(1024) band_hint(const int4 *__restrict__ src, int rows, int row_vecs,
                                                  int rows_per_block, unsigned *sink) {
  const int r0 = blockIdx.y * rows_per_block, r1 = min(rows, r0 + rows_per_block);
  const int acc = read_band_rows<U, H>(src, row_vecs, blockIdx.x, r0, r1);
  if (acc == 0x12345678) sink[blockIdx.x] = acc;
}

// `hints` mode: the GEMVs' block shapes (one block per band, K split 1,
// 2 or 4 ways) with each load flavour.
static void hint_sweep(int rows, int cols, const char *name, unsigned *sink) {
  const int row_vecs = cols / 8, bands = row_vecs / 8;
  const size_t bytes = (size_t)rows * cols * 2;
  const std::vector<int4 *> bufs = weight_copies(bytes);
  static const char *names[] = {"ld.cs", "ld.L1::no_allocate", "+L2::128B", "+L2::256B", "nc+L2::256B"};
  for (int split : {1, 2, 4})
    for (int threads : {512, 1024})
      for (int unroll : {4, 8})
        for (int h = 0; h < 5; ++h) {
          const int per = (rows + split - 1) / split;
          const dim3 grid(bands, split);
          auto launch = [&](const int4 *p) {
#define HINT_CASE(U, H) if (unroll == U && h == H) band_hint<U, H><<<grid, threads>>>(p, rows, row_vecs, per, sink);
            HINT_CASE(4, 0) HINT_CASE(4, 1) HINT_CASE(4, 2) HINT_CASE(4, 3) HINT_CASE(4, 4)
            HINT_CASE(8, 0) HINT_CASE(8, 1) HINT_CASE(8, 2) HINT_CASE(8, 3) HINT_CASE(8, 4)
#undef HINT_CASE
          };
          const double us = us_per_call(launch, bufs, 30);
          printf("%s, hints: %d blocks (%d bands x %d), %d threads, %d in flight, %s: %.1f us %.2f TB/s\n", name,
                 bands * split, bands, split, threads, unroll, names[h], us, bytes / us / 1e6);
        }
  free_all(bufs);
}

int main(int argc, char **argv) {
  // `long`: 128-byte bands only, K split 1 or 2 ways (a GEMV's blocks,
  // each over its whole K range), every configuration printed.
  const bool long_blocks = argc > 1 && std::string(argv[1]) == "long";
  if (argc > 1 && std::string(argv[1]) == "hints") {
    unsigned *sink;
    cudaMalloc(&sink, 1 << 20);
    hint_sweep(8192, 7168, "gate+up (2 x 4096 x 7168)", sink);
    hint_sweep(7168, 4096, "down (7168 x 4096)", sink);
    if (cudaGetLastError() != cudaSuccess) { printf("CUDA error\n"); return 1; }
    return 0;
  }
  if (argc > 1 && std::string(argv[1]) == "streamk") {
    unsigned *sink;
    cudaMalloc(&sink, 1 << 20);
    streamk_sweep(8192, 7168, "gate+up (2 x 4096 x 7168)", sink);
    streamk_sweep(7168, 4096, "down (7168 x 4096)", sink);
    streamk_sweep(4096, 7168, "one of gate/up (4096 x 7168)", sink);
    if (cudaGetLastError() != cudaSuccess) { printf("CUDA error\n"); return 1; }
    return 0;
  }
  struct Shape { const char *name; int rows, cols; };
  std::vector<Shape> shapes = {{"gate+up (2 x 4096 x 7168)", 8192, 7168},
                               {"down (7168 x 4096)", 7168, 4096}};
  unsigned *sink;
  cudaMalloc(&sink, 1 << 20);
  for (auto s : shapes) {
    size_t bytes = (size_t)s.rows * s.cols * 2;
    const std::vector<int4 *> bufs = weight_copies(bytes);
    const int row_vecs = s.cols / 8;
    for (int width : {128, 256, 512, 1024, 2048}) {
      if (long_blocks && width != 128) continue;
      double best = 1e30; char what[128] = "";
      int width_vecs = width / 16;
      int bands = row_vecs / width_vecs;
      for (int split : {1, 2, 4, 8, 16, 32, 64})
        for (int threads : {128, 256, 512, 1024}) {
          if (long_blocks ? split > 2 : threads > 512) continue;
          for (int unroll : {2, 4, 8}) {
            int rows_per_block = (s.rows + split - 1) / split;
            dim3 grid(bands, split);
            for (int packed = 0; packed < (long_blocks ? 2 : 1); ++packed) {
            auto launch = [&](const int4 *p) {
              if (packed) {
                if (unroll == 2) band<2, true><<<grid, threads>>>(p, s.rows, row_vecs, width_vecs, rows_per_block, sink);
                if (unroll == 4) band<4, true><<<grid, threads>>>(p, s.rows, row_vecs, width_vecs, rows_per_block, sink);
                if (unroll == 8) band<8, true><<<grid, threads>>>(p, s.rows, row_vecs, width_vecs, rows_per_block, sink);
                return;
              }
              if (unroll == 2) band<2><<<grid, threads>>>(p, s.rows, row_vecs, width_vecs, rows_per_block, sink);
              if (unroll == 4) band<4><<<grid, threads>>>(p, s.rows, row_vecs, width_vecs, rows_per_block, sink);
              if (unroll == 8) band<8><<<grid, threads>>>(p, s.rows, row_vecs, width_vecs, rows_per_block, sink);
            };
            const double us = us_per_call(launch, bufs, 24);
            if (long_blocks)
              printf("%s, 128-byte bands%s, %d blocks (%d bands x %d), %d threads, %d in flight: %.1f us %.2f TB/s\n",
                     s.name, packed ? " packed" : "", bands * split, bands, split, threads, unroll, us, bytes / us / 1e6);
            if (us < best) {
              best = us;
              snprintf(what, sizeof what, "%d blocks (%d bands x %d), %d threads, %d in flight%s",
                       bands * split, bands, split, threads, unroll, packed ? ", packed" : "");
            }
            }
          }
        }
      printf("%s, %4d-byte bands: %.1f us %.2f TB/s  %s\n", s.name, width, best, bytes / best / 1e6, what);
    }
    if (cudaGetLastError() != cudaSuccess) { printf("CUDA error\n"); return 1; }
    free_all(bufs);
  }
}
