// Shared by the register-streaming probes (regmma.cu, fused_mlp.cu): the
// mma.sync m16n8k16 of bf16 into f32, and the step that feeds it from a
// lane's four 16-byte weight pieces. Lane (g = lane / 4, q = lane % 4)
// holds rows k0+2q, k0+2q+1, k0+2q+8, k0+2q+9 at columns [c + 8g, c + 8g + 8);
// a byte permute pairs rows k and k+1 into the B fragments of 8 mmas, one per
// column j of the piece (mma j's logical column g is physical column
// c + 8g + j).
#pragma once
#include <cstdint>

__device__ __forceinline__ void mma(float *d, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                    uint32_t b0, uint32_t b1) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
      "{%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t word(const uint4 &v, int i) {
  return i == 0 ? v.x : i == 1 ? v.y : i == 2 ? v.z : v.w;
}

// The 8 mmas of one 16-row step: A fragment a[0..3], the lane's four rows.
__device__ __forceinline__ void mma_step(float (&acc)[8][4], const uint32_t (&a)[4],
                                         const uint4 *rows) {
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    const unsigned sel = (j & 1) ? 0x7632 : 0x5410;
    uint32_t b0 = __byte_perm(word(rows[0], j / 2), word(rows[1], j / 2), sel);
    uint32_t b1 = __byte_perm(word(rows[2], j / 2), word(rows[3], j / 2), sel);
    mma(acc[j], a[0], a[1], a[2], a[3], b0, b1);
  }
}

// The lane's four weight rows of the step at row k = 16 s + 2q (streaming
// loads: read once), `ld` vectors a row, column vector `cv`.
__device__ __forceinline__ void load_rows(uint4 *rows, const uint4 *wt, int k, int ld, int cv) {
  rows[0] = __ldcs(wt + (size_t)k * ld + cv);
  rows[1] = __ldcs(wt + (size_t)(k + 1) * ld + cv);
  rows[2] = __ldcs(wt + (size_t)(k + 8) * ld + cv);
  rows[3] = __ldcs(wt + (size_t)(k + 9) * ld + cv);
}
