//! The streaming kernels for a few rows of `a` (decode): the same matmul
//! as `kernel` (`out = a @ w`, or a pair's `epilogue(a @ w0, a @ w1)` with
//! the row-norm prologue), as a GEMV on the CUDA cores instead of the
//! tensor cores, for calls of one row, or of up to `rows` rows (each thread
//! keeps every row's sums). Their tilings (`GemvTile`) also describe the
//! GEMV on the tensor cores (`gemv_mma`), which shares the output stage.
//!
//! At one row the tensor-core kernel wastes 15 of its 16 rows and stages
//! the weight through shared memory. Here each thread streams 16-byte
//! pieces of the weight straight into registers, `unroll` loads in flight,
//! and multiplies them by the rows of `a`, which the block keeps in shared
//! memory as f32 (after the prologue, rounded to bf16 as the separate kernel
//! rounds it). A block owns `columns` columns of every weight over the whole
//! K range of its split-K slice: its threads are `pieces x k_groups`, piece
//! p reading columns [8p, 8p + 8) of its weight, k-group g the rows
//! g, g + k_groups, ... (so a warp reads neighbouring rows, and neighbouring
//! words of `a`). The k-groups' sums meet in shared memory, and each thread
//! then writes whole output elements, through the epilogue when there is
//! one.
//!
//! Measured as a CUDA C++ probe on one H200 first
//! (`bench/gemv_probe/fma_gemv.cu`): the Llama-3-8B pair (4096 x 7168 per
//! weight) with its norm and SiLU·up fused in 30.3 µs (3.87 TB/s), against
//! 44.5 µs for the norm kernel, cuBLAS's batched pair and the SiLU kernel
//! in the same process; 64 columns per block read faster than 32 or 16.
//!
//! - `tile`: a tiling (`GemvTile`): engine, bands, k-groups, loads in
//!   flight, the shared memory it lays out, and why it cannot run;
//! - `choice`: which tilings a matmul runs, their kernels' names, grids
//!   and problems (`SkinnyMatmul::gemv_tiles_for`);
//! - `emit`: the kernels' IR, the CUDA-core GEMV's loop and what every
//!   engine shares (weight pieces, the rows of `a` in shared memory, the
//!   output stage); the other engines' loops are `gemv_mma`, `gemv_tma`,
//!   `gemv_wgmma` and the n x k layouts' `gemv_linear`, `gemv_mma_linear`.

mod choice;
mod emit;
#[cfg(test)]
pub(super) mod tests;
mod tile;

pub(super) use emit::{Gemv, Operands, row_piece};
pub use tile::{Engine, GemvShape, GemvTile, L1_KEEPING_SHARED, SHORT_GRID_BLOCKS};
pub(super) use tile::{LINE_ELEMENTS, MMA_COLUMNS, PIECE};
