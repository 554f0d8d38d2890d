// Probe (issue 32, session 32; not shipped): how fast a block per column
// band reads the MLP block's weights, against a block per contiguous span
// of the same bytes, on the same grid, threads and loads in flight.
//
// The generated GEMVs own 64 columns of a row-major k x n weight (128
// bytes of each row) over a K range: the gate+up pair 112 blocks over
// 4096 rows of two 4096 x 7168 weights (row pitch 14336 bytes), the down
// projection 128 blocks (64 bands x 2 split-K slices of 3584 rows, pitch
// 8192). Stored n x k (nn.Linear's layout), the same block's bytes are one
// contiguous span. l2_handoff.cu found contiguous spans read at 4.18 TB/s
// (pair) and 3.94 (down) on these grids, where the GEMVs read at 3.7 and
// 3.0. Is the band the cause, and is the down projection's power-of-two
// pitch part of it (a pitch padded by 256 bytes)?
//
// Each kernel: 1024 threads a block, one block an SM (120 KB of dynamic
// shared memory asked), 16-byte loads past L1, 4 in flight a thread; in a
// band, 8 threads a 128-byte row piece, 128 rows a step. Weights rotate
// over 3 copies; a CUDA graph of 30 reads, replayed 10 times; µs a read,
// the best of 3 rounds.
//
//   nvcc -O3 -gencode=arch=compute_90a,code=sm_90a -o /tmp/band_read bench/gemv_probe/band_read.cu
//   /tmp/band_read
//
// With BAND_SMEM set (session 33) it runs instead the pair's and the down
// projection's GEMV loop at 0 to 227 KB of dynamic shared memory a block,
// and at three carveout preferences: how much L1 the loop's loads in
// flight need (bench/results/2026-11-28-l1-carveout-h200.md).
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "../floor/stream_kernels.cuh"  // CHECK, NoAllocateLoad

constexpr int UNROLL = 4;

// The generated GEMVs' load (past L1), at a byte address.
__device__ inline int4 load(const char *p) {
  return NoAllocateLoad{}(reinterpret_cast<const int4 *>(p));
}

// A lane's step: its 16-byte pieces of rows `row` .. `row` + 3, `pitch`
// bytes apart from `base` (zeros where the step is not `inside` its range).
__device__ inline void load_step(int4 (&piece)[4], const char *base, int row, size_t pitch, bool inside) {
#pragma unroll
  for (int r = 0; r < 4; ++r) piece[r] = inside ? load(base + size_t(row + r) * pitch) : make_int4(0, 0, 0, 0);
}

// Block b reads the contiguous span b of `bytes` split in gridDim.x spans.
__global__ void spans(const char *src, size_t bytes, unsigned *sink) {
  size_t per = (bytes / 16 + gridDim.x - 1) / gridDim.x * 16;
  size_t begin = size_t(blockIdx.x) * per, end = begin + per < bytes ? begin + per : bytes;
  unsigned acc = 0;
  size_t i = begin + 16 * threadIdx.x, step = 16 * blockDim.x;
  for (; i + (UNROLL - 1) * step < end; i += UNROLL * step) {
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = load(src + i + u * step);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; i < end; i += step) {
    int4 v = load(src + i);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

// Block b reads band b % bands (128 bytes of each row) of the rows of
// slice b / bands (rows / slices of them), `pitch` bytes a row.
__global__ void bands(const char *src, int rows, size_t pitch, int bands, int slices, unsigned *sink) {
  int band = blockIdx.x % bands, slice = blockIdx.x / bands;
  int per = rows / slices, first = slice * per, last = first + per;
  int piece = threadIdx.x % 8, row = first + threadIdx.x / 8, step = blockDim.x / 8;
  const char *base = src + size_t(band) * 128 + piece * 16;
  unsigned acc = 0;
  for (; row + (UNROLL - 1) * step < last; row += UNROLL * step) {
    int4 v[UNROLL];
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) v[u] = load(base + size_t(row + u * step) * pitch);
#pragma unroll
    for (int u = 0; u < UNROLL; ++u) acc ^= v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
  }
  for (; row < last; row += step) {
    int4 v = load(base + size_t(row) * pitch);
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

// The register GEMVs' loop without their arithmetic: a warp is one
// k-group of one weight's 64-column band; lane (g, t) loads piece g of
// rows 4t..4t+3 of each of its steps (16 rows: steps k_group,
// k_group + k_groups, ...), D steps in flight: each step's loads are
// issued before the oldest step is consumed (as gemv_mma.rs's loop).
// Blocks: `bands` x `slices` (the K range split), `weights` weights one
// after the other in rows (the pair's gate then up: a warp of weight w
// takes rows w * rows_per_weight + ...).
template <int D>
__global__ void gemv_loop(const char *src, int rows_per_weight, size_t pitch, int bands, int slices,
                          int weights, unsigned *sink) {
  int band = blockIdx.x % bands, slice = blockIdx.x / bands;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  int warps = blockDim.x / 32, k_groups = warps / weights;
  int weight = warp / k_groups, k_group = warp % k_groups;
  int per = rows_per_weight / slices, first = weight * rows_per_weight + slice * per;
  int steps = per / 16, mine = (steps - k_group + k_groups - 1) / k_groups;
  const char *base = src + size_t(band) * 128 + g * 16;
  auto step_row = [&](int i) { return first + (k_group + i * k_groups) * 16 + 4 * t; };
  int4 ring[D][4];
#pragma unroll
  for (int d = 0; d < D; ++d) load_step(ring[d], base, step_row(d), pitch, d < mine);
  unsigned acc = 0;
  for (int i = 0; i < mine; i += D) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      int4 next[4];
      bool more = i + d + D < mine;
      load_step(next, base, step_row(i + d + D), pitch, more);
      if (i + d < mine)
#pragma unroll
        for (int r = 0; r < 4; ++r) acc ^= ring[d][r].x ^ ring[d][r].y ^ ring[d][r].z ^ ring[d][r].w;
#pragma unroll
      for (int r = 0; r < 4; ++r) ring[d][r] = next[r];
    }
  }
  if (acc == 0x12345678u) sink[blockIdx.x] = acc;
}

// gemv_loop with the down projection's arithmetic: per step the
// lane packs two of its rows' bf16 at each of its 8 columns (16 prmt) and
// issues 8 mma.sync m16n8k16 (A: a per-step register value standing for
// the staged rows of `a`); and its output stage (EPI): the warps' 32
// accumulators a lane meet in shared memory (16 k-groups x 32 lanes x 36
// words), and each thread sums its outputs over the k-groups and stores
// f32 (the slice), as gemv_mma.rs does.
template <int D, int EPI, bool A_SMEM = false, bool A_READ = A_SMEM>
__global__ void __launch_bounds__(512, 1) gemv_mma_loop(const char *src, int rows_per_weight, size_t pitch, int bands, int slices,
                              float *out, unsigned *sink, const int4 *act = nullptr) {
  extern __shared__ float shared[];
  int band = blockIdx.x % bands, slice = blockIdx.x / bands;
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  int k_groups = blockDim.x / 32, k_group = warp;
  int per = rows_per_weight / slices, first = slice * per;
  int steps = per / 16, mine = (steps - k_group + k_groups - 1) / k_groups;
  const char *base = src + size_t(band) * 128 + g * 16;
  auto step_row = [&](int i) { return first + (k_group + i * k_groups) * 16 + 4 * t; };
  int4 ring[D][4];
#pragma unroll
  for (int d = 0; d < D; ++d) load_step(ring[d], base, step_row(d), pitch, d < mine);
  // A_SMEM: the slice's 16 rows of `a` (per bf16 each) staged first, as
  // mma16_staged stages them, and each step's A fragment read from there.
  const char *a_rows = reinterpret_cast<const char *>(shared);
  // Rows `pitch_a` bytes apart: K's bytes plus 32, so that the eight rows
  // of a fragment's loads fall in different banks (GemvTile::staged_row_stride).
  const size_t pitch_a = size_t(per) * 2 + 32;
  if (A_SMEM) {
    int row_vectors = per / 8;
    stage_rows(reinterpret_cast<char *>(shared), act + slice * row_vectors, 16, row_vectors,
               rows_per_weight / 8, pitch_a);
    __syncthreads();
  }
  float acc[32];
#pragma unroll
  for (int q = 0; q < 32; ++q) acc[q] = 0.f;
  for (int i = 0; i < mine; i += D) {
#pragma unroll
    for (int d = 0; d < D; ++d) {
      int4 next[4];
      bool more = i + d + D < mine;
      load_step(next, base, step_row(i + d + D), pitch, more);
      if (i + d < mine) {
        unsigned a0 = 0x3f803f80u ^ (i + d), a1 = a0 + 1, a2 = a0 + 2, a3 = a0 + 3;
        if (A_READ) {
          int at = (k_group + (i + d) * k_groups) * 16 + 4 * t;
          uint2 lo = *reinterpret_cast<const uint2 *>(a_rows + g * pitch_a + at * 2);
          uint2 hi = *reinterpret_cast<const uint2 *>(a_rows + (g + 8) * pitch_a + at * 2);
          a0 = lo.x; a1 = hi.x; a2 = lo.y; a3 = hi.y;
        }
        const unsigned *w0 = reinterpret_cast<const unsigned *>(&ring[d][0]);
        const unsigned *w1 = reinterpret_cast<const unsigned *>(&ring[d][1]);
        const unsigned *w2 = reinterpret_cast<const unsigned *>(&ring[d][2]);
        const unsigned *w3 = reinterpret_cast<const unsigned *>(&ring[d][3]);
#pragma unroll
        for (int j = 0; j < 8; ++j) {
          unsigned sel = (j & 1) ? 0x7632u : 0x5410u;
          unsigned b0, b1;
          asm("prmt.b32 %0, %1, %2, %3;" : "=r"(b0) : "r"(w0[j / 2]), "r"(w1[j / 2]), "r"(sel));
          asm("prmt.b32 %0, %1, %2, %3;" : "=r"(b1) : "r"(w2[j / 2]), "r"(w3[j / 2]), "r"(sel));
          asm volatile(
              "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, "
              "{%8, %9}, {%0, %1, %2, %3};"
              : "+f"(acc[4 * j]), "+f"(acc[4 * j + 1]), "+f"(acc[4 * j + 2]), "+f"(acc[4 * j + 3])
              : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
        }
      }
#pragma unroll
      for (int r = 0; r < 4; ++r) ring[d][r] = next[r];
    }
  }
  if (EPI == 1) {
    if (A_SMEM) __syncthreads();
    float *mine_words = shared + (size_t(warp) * 32 + lane) * 36;
#pragma unroll
    for (int q = 0; q < 32; q += 4)
      *reinterpret_cast<float4 *>(mine_words + q) = make_float4(acc[q], acc[q + 1], acc[q + 2], acc[q + 3]);
    __syncthreads();
    // 16 rows x 64 columns of outputs; thread o takes outputs o and o + 512.
    for (int o = threadIdx.x; o < 1024; o += blockDim.x) {
      int l = o % 32, q = o / 32;
      float sum = 0.f;
      for (int k = 0; k < k_groups; ++k) sum += shared[(size_t(k) * 32 + l) * 36 + q];
      out[size_t(blockIdx.x) * 1024 + o] = sum;
    }
  } else if (EPI == 2) {
    // Accumulator q of lane l of warp k at word (k * 32 + q) * 32 + l: the
    // stores of a warp and the reads of 32 threads are consecutive words.
    if (A_SMEM) __syncthreads();
#pragma unroll
    for (int q = 0; q < 32; ++q) shared[(size_t(warp) * 32 + q) * 32 + lane] = acc[q];
    __syncthreads();
    for (int o = threadIdx.x; o < 1024; o += blockDim.x) {
      float sum = 0.f;
#pragma unroll 4
      for (int k = 0; k < k_groups; ++k) sum += shared[size_t(k) * 1024 + o];
      out[size_t(blockIdx.x) * 1024 + o] = sum;
    }
  } else {
    float sum = 0.f;
#pragma unroll
    for (int q = 0; q < 32; ++q) sum += acc[q];
    if (sum == 1234.5f) sink[blockIdx.x] = 1;
  }
}

struct Case {
  const char *name;
  int rows;        // weight rows (both weights' for the pair)
  size_t pitch;    // bytes a row in memory
  size_t used;     // bytes a row read (the weight's columns)
  int bands, slices;
  bool contiguous; // spans of the same bytes instead of bands
  int loop = 0;    // > 0: gemv_loop with this depth
  int threads = 1024, weights = 1;
  int smem = 120 << 10; // dynamic shared memory a block asks
  int carveout = -1;    // the kernel's preferred shared-memory carveout (%; -1: the driver's)
};

int main() {
  const int COPIES = 3, ITER = 30, REPLAYS = 10, PIN = 120 << 10;
  std::vector<Case> cases = {
      {"pair, 112 bands x 8192 rows, pitch 14336", 8192, 14336, 14336, 112, 1, false},
      {"pair, 112 contiguous spans", 8192, 14336, 14336, 112, 1, true},
      {"pair, 112 bands, pitch 14336 + 256", 8192, 14336 + 256, 14336, 112, 1, false},
      {"down, 64 bands x 2 slices of 3584 rows, pitch 8192", 7168, 8192, 8192, 64, 2, false},
      {"down, 128 contiguous spans", 7168, 8192, 8192, 64, 2, true},
      {"down, 64 bands x 2 slices, pitch 8192 + 256", 7168, 8192 + 256, 8192, 64, 2, false},
      {"down, 64 bands x 2 slices, pitch 8192 + 128", 7168, 8192 + 128, 8192, 64, 2, false},
      {"down, 64 bands x 2 slices, pitch 8192 + 1024", 7168, 8192 + 1024, 8192, 64, 2, false},
      {"pair, GEMV loop, 512 threads (2 x 8 k-groups), 2 steps", 8192, 14336, 14336, 112, 1, false, 2, 512, 2},
      {"pair, GEMV loop, 512 threads, 3 steps", 8192, 14336, 14336, 112, 1, false, 3, 512, 2},
      {"pair, GEMV loop, 512 threads, 4 steps", 8192, 14336, 14336, 112, 1, false, 4, 512, 2},
      {"pair, GEMV loop, 1024 threads (2 x 16), 2 steps", 8192, 14336, 14336, 112, 1, false, 2, 1024, 2},
      {"down, GEMV loop, 512 threads (16 k-groups), 2 steps", 7168, 8192, 8192, 64, 2, false, 2, 512, 1},
      {"down, GEMV loop, 512 threads, 3 steps", 7168, 8192, 8192, 64, 2, false, 3, 512, 1},
      {"down, GEMV loop, 512 threads, 4 steps", 7168, 8192, 8192, 64, 2, false, 4, 512, 1},
      {"down, GEMV loop, 1024 threads (32 k-groups), 2 steps", 7168, 8192, 8192, 64, 2, false, 2, 1024, 1},
      {"down, GEMV loop + mma, 512 threads, 2 steps", 7168, 8192, 8192, 64, 2, false, 12, 512, 1},
      {"down, GEMV loop + mma + k-group sums, 2 steps", 7168, 8192, 8192, 64, 2, false, 22, 512, 1},
      {"down, GEMV loop + mma + k-group sums, 3 steps", 7168, 8192, 8192, 64, 2, false, 23, 512, 1},
      {"down, GEMV loop + a staged + mma + k-group sums, 2 steps", 7168, 8192, 8192, 64, 2, false, 32, 512, 1},
      {"down, GEMV loop + a staged (not read) + mma + k-group sums", 7168, 8192, 8192, 64, 2, false, 33, 512, 1},
      {"down, GEMV loop + mma + k-group sums, conflict-free layout", 7168, 8192, 8192, 64, 2, false, 42, 512, 1},
      {"down, GEMV loop + a staged + mma + sums, conflict-free", 7168, 8192, 8192, 64, 2, false, 52, 512, 1},
      {"down, GEMV loop, 256 threads (8 k-groups), 4 steps", 7168, 8192, 8192, 64, 2, false, 4, 256, 1},
      {"down, GEMV loop + mma + k-group sums, 256 threads, 4 steps", 7168, 8192, 8192, 64, 2, false, 24, 256, 1},
  };
  // Session 33: does the shared memory a block asks (and so the L1 left
  // beside it) set the GEMV loop's read? The pair's GEMV asks 131.6 KB
  // (16 staged rows of K = 4096), the down projection's 114.7 KB; weight
  // steps copied into shared memory behind the prologue made the pair
  // slower by more than their bytes.
  if (std::getenv("BAND_SMEM")) {
    cases.clear();
    for (int kb : {0, 64, 100, 120, 132, 164, 196, 227})
      for (int pair = 1; pair >= 0; --pair) {
        char *name = new char[96];
        std::snprintf(name, 96, "%s, GEMV loop, 512 threads, 2 steps, %d KB shared", pair ? "pair" : "down", kb);
        Case c = pair ? Case{name, 8192, 14336, 14336, 112, 1, false, 2, 512, 2}
                      : Case{name, 7168, 8192, 8192, 64, 2, false, 2, 512, 1};
        c.smem = kb << 10;
        cases.push_back(c);
      }
    for (int carveout : {0, 50, 100}) {
      char *name = new char[96];
      std::snprintf(name, 96, "pair, GEMV loop, 2 steps, 0 KB shared, carveout %d%%", carveout);
      Case c{name, 8192, 14336, 14336, 112, 1, false, 2, 512, 2};
      c.smem = 0;
      c.carveout = carveout;
      cases.push_back(c);
    }
  }
  CHECK(cudaFuncSetAttribute(spans, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(bands, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_loop<2>, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 << 10));
  CHECK(cudaFuncSetAttribute(gemv_loop<3>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_loop<4>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  unsigned *sink;
  CHECK(cudaMalloc(&sink, 4096 * 4));
  float *out;
  CHECK(cudaMalloc(&out, 256 * 1024 * 4));
  CHECK(cudaFuncSetAttribute(gemv_mma_loop<2, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_mma_loop<2, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_mma_loop<3, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_mma_loop<4, 1>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_mma_loop<2, 1, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_mma_loop<2, 1, true, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_mma_loop<2, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  CHECK(cudaFuncSetAttribute(gemv_mma_loop<2, 2, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, PIN));
  int4 *act;  // 16 rows of the down projection's `a` (16 x 7168 bf16)
  CHECK(cudaMalloc(&act, 16 * 7168 * 2));
  CHECK(cudaMemset(act, 0, 16 * 7168 * 2));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  for (int round = 1; round <= 3; ++round) {
    for (auto &c : cases) {
      size_t bytes = size_t(c.rows) * c.pitch;
      std::vector<char *> w(COPIES);
      for (auto &p : w) {
        CHECK(cudaMalloc(&p, bytes));
        CHECK(cudaMemset(p, 1, bytes));
      }
      int grid = c.bands * c.slices;
      CHECK(cudaFuncSetAttribute(gemv_loop<2>, cudaFuncAttributePreferredSharedMemoryCarveout, c.carveout));
      float ms = graph_replays_ms(s, 1, REPLAYS, [&] {
        for (int i = 0; i < ITER; ++i) {
          int rpw = c.rows / c.weights;
          if (c.loop == 2)
            gemv_loop<2><<<grid, c.threads, c.smem, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, c.weights, sink);
          else if (c.loop == 3)
            gemv_loop<3><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, c.weights, sink);
          else if (c.loop == 4)
            gemv_loop<4><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, c.weights, sink);
          else if (c.loop == 12)
            gemv_mma_loop<2, 0><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, out, sink);
          else if (c.loop == 22)
            gemv_mma_loop<2, 1><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, out, sink);
          else if (c.loop == 23)
            gemv_mma_loop<3, 1><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, out, sink);
          else if (c.loop == 32)
            gemv_mma_loop<2, 1, true><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, out, sink, act);
          else if (c.loop == 33)
            gemv_mma_loop<2, 1, true, false><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, out, sink, act);
          else if (c.loop == 42)
            gemv_mma_loop<2, 2><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, out, sink);
          else if (c.loop == 52)
            gemv_mma_loop<2, 2, true><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, out, sink, act);
          else if (c.loop == 24)
            gemv_mma_loop<4, 1><<<grid, c.threads, PIN, s>>>(w[i % COPIES], rpw, c.pitch, c.bands, c.slices, out, sink);
          else if (c.contiguous)
            spans<<<grid, 1024, PIN, s>>>(w[i % COPIES], bytes, sink);
          else
            bands<<<grid, 1024, PIN, s>>>(w[i % COPIES], c.rows, c.pitch, c.bands, c.slices, sink);
        }
      });
      double us = ms * 1000.0 / (REPLAYS * ITER);
      double read = double(c.rows) * c.used;
      std::printf("round %d  %-52s %5.1f us  %.2f TB/s\n", round, c.name, us, read / us / 1e6);
      for (auto p : w) CHECK(cudaFree(p));
    }
  }
  return 0;
}
