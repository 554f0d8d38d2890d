// Probe (issue 32, session 36): where the block scheduler puts a grid of
// more blocks than SMs that can hold two blocks an SM (the narrow GEMV of
// bench/results/2026-11-28-coresident-h200.md: 140 blocks of 256 threads,
// .minnctapersm 2): each block records its SM (%smid) and stays resident
// ~50 us, so every block of the grid is placed before any leaves; the
// histogram says how many SMs got 0, 1 and 2 blocks.
//   nvcc -O3 -arch=sm_90a -o /tmp/placement bench/gemv_probe/placement.cu && /tmp/placement
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>

__global__ void __launch_bounds__(256, 2) place(unsigned *sm, long long spin) {
  if (threadIdx.x == 0) {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    sm[blockIdx.x] = id;
  }
  const long long t0 = clock64();
  while (clock64() - t0 < spin) {
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  unsigned *d;
  cudaMalloc(&d, 4096 * 4);
  for (int smem : {0, 36 << 10, 100 << 10}) {
    cudaFuncSetAttribute(place, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    for (int grid : {70, 132, 140, 148, 216}) {
      place<<<grid, 256, smem>>>(d, 100000);
      if (cudaDeviceSynchronize() != cudaSuccess) {
        printf("launch failed\n");
        return 1;
      }
      std::vector<unsigned> h(grid);
      cudaMemcpy(h.data(), d, grid * 4, cudaMemcpyDeviceToHost);
      std::vector<int> per(sms, 0);
      for (unsigned s : h) per[s]++;
      int hist[4] = {0, 0, 0, 0};
      for (int c : per) hist[c < 3 ? c : 3]++;
      printf("grid %3d, %3d KB shared: SMs with 0 / 1 / 2 / more blocks: %d / %d / %d / %d\n", grid,
             smem >> 10, hist[0], hist[1], hist[2], hist[3]);
    }
  }
  return 0;
}
