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

use super::kernel::{RowScaleFunctions, SkinnyMatmul};
use super::tensor_core::TensorCore;
use crate::PassError;
use crate::collectives::emit::Emitter;
use crate::collectives::emit::{Blk, Val};
use crate::ir::scalar::Scalar;
use melior::dialect::{arith::CmpiPredicate, ods};

/// Elements of bf16 in a 16-byte piece.
pub(super) const PIECE: u64 = 8;
/// bf16 elements of a 128-byte line (what one L2 prefetch brings).
pub(super) const LINE_ELEMENTS: u64 = 64;
/// The most 16-byte vectors of a row of `a` a thread holds in registers
/// while the rows are prepared (`Gemv::rows_fit_registers`).
const HELD_VECTORS: u64 = 4;
/// Columns of one warp of the tensor-core GEMV (8 pieces, one per lane
/// group of an `mma` fragment).
pub(super) const MMA_COLUMNS: u64 = 64;
/// A single matmul whose register-streaming tensor-core GEMV would run
/// fewer blocks than this takes the wgmma GEMV's 8-stage ring for calls of
/// 2 to 16 rows where the chip has wgmma (`GemvTile::SHORT_WGMMA`). Each
/// block of the register GEMV keeps 64 KB of weight in flight (16 warps, 2
/// steps of 2 KB), so a grid of 64 blocks (TP 2's o_proj: N = 4096 in one
/// slice) holds 4 MB, half of what a full H200 grid holds; the ring holds
/// 128 KB a block. On one H200 the Llama-3-8B decoder's o_proj at 16 rows
/// took 6.5 µs against 10.1 for `mma16_staged` and 6.7 for cuBLAS, and the
/// decoder 0.6-4 µs less a call at TP 2, 4 and 8's widths (on 2x H200 the
/// TP-2 decoder at 16 rows 61.5-62.0 against 66.1-67.0 µs enqueued, its
/// graph all symm kernels and so replayed as launch lists); the down
/// projection's 128 blocks (two slices) keep `mma16_staged`, since the MLP
/// block measured 0.5-1 µs slower with the ring there
/// (bench/results/2026-11-28-short-grid-wgmma-h200x2.md).
pub const SHORT_GRID_BLOCKS: u64 = 128;

/// Which units multiply: each thread's f32 FMAs, the warps' `mma.sync`
/// on weight streamed into registers (`gemv_mma`), `mma.sync` on weight
/// that the TMA streams through shared memory (`gemv_tma`), or a
/// warpgroup's `wgmma` on the TMA's weight tiles (`gemv_wgmma`, sm_90a).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Engine {
    CudaCores,
    TensorCores,
    Tma,
    Wgmma,
}

/// The GEMV's tiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemvTile {
    pub engine: Engine,
    /// Columns of each weight per block (a multiple of 8; of 64 on the
    /// tensor cores, a warp's columns).
    pub columns: u64,
    /// Threads (warps on the tensor cores) that split each column piece's
    /// K range.
    pub k_groups: u64,
    /// Loads in flight per thread (16-row steps of four loads on the
    /// tensor cores; the ring's stages with the TMA).
    pub unroll: u64,
    /// With the TMA: the weight rows of a stage (a multiple of 16 k-groups'
    /// steps); 0 for the other engines.
    pub stage_rows: u64,
    /// Rows of `a` the kernel takes (calls of up to this many rows; 8 or
    /// 16 on the tensor cores).
    pub rows: u64,
    /// On the tensor cores: the block stages the rows of `a` in shared
    /// memory (bf16) before its loop even without a prologue, rather than
    /// reading each step's fragments from global memory (a prologue stages
    /// them either way, unless it streams: `GemvShape::streamed`).
    pub stage_a: bool,
    /// The most rows of a call the kernel takes, where fewer than `rows`
    /// (0: `rows`): a GEMV laid out for 16 rows that runs only the calls of
    /// up to 8, the next tiling taking the rest.
    pub calls: u64,
    /// The thread's first loads (16-row steps on the tensor cores) whose
    /// lines the kernel prefetches into L2 before it waits for the grids
    /// before it (`symm-wait-for-prior-grids`): launched early, the kernel
    /// starts its weight's stream while the grid before it drains. On one
    /// H200 the single matmuls gain (the down projection after the pair,
    /// M = 1: 16.6 to 14.4 µs of its kernel, the block 45.6 to 44.3 µs);
    /// the pairs lose where nothing launched them early (first in a call,
    /// M = 2..16: 0.7-1.5 µs; bench/results/2026-11-26-session7-h200.md),
    /// so a pair prefetches only behind an all-reduce that lets it launch
    /// as that starts (`SkinnyMatmul::launched_early`: the one-row GEMV
    /// behind a rows kernel), where on 2x H200 the decoder gains 0.8-1 µs
    /// more than from the early launch alone; the tensor-core pair at 16
    /// rows lost 0.3-2 µs (bench/results/2026-11-27-early-launch-rows-h200x2.md).
    /// With the TMA: weight rows of the block's columns, one line each.
    /// With weights stored n x k: steps of the CUDA-core GEMV (a line a
    /// thread each), iterations of the tensor-core one (a line of each of
    /// the warp's rows each).
    pub prefetch: u64,
    /// With the TMA: the weight's copies carry an L2 evict-first policy
    /// (read once, they leave L2 to what is read again: the rows of `a`).
    pub evict_first: bool,
    /// On the tensor cores (weights stored k x n): the warp's steps past
    /// those its registers hold in flight whose lines it prefetches into
    /// L2 in its loop (0: none), more of the weight in flight at no
    /// register's cost.
    pub ahead: u64,
}

impl GemvTile {
    /// The pair's and the single matmul's tilings: the fastest of a sweep
    /// of the generated kernels at the TP-2 Llama-3-8B shapes on one H200
    /// (bench/results/2026-11-26-gemv-h200x2.md).
    pub const PAIR: GemvTile = GemvTile {
        engine: Engine::CudaCores,
        columns: 64,
        k_groups: 64,
        unroll: 4,
        rows: 1,
        prefetch: 8,
        stage_rows: 0,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
    };
    /// The one-row GEMVs of weights stored n x k (`gemv_linear`), the
    /// fastest of a sweep on one H200 for the Llama-3-8B TP-2 shard
    /// (bench/results/2026-11-27-linear-gemv-h200.md): the pair 64 columns
    /// of each weight a block, 32 k-groups and one step of 8 loads in
    /// flight (112 blocks of 512 threads, one wave; two steps read as fast
    /// but spill at 512 threads), the single matmul 32 columns, 64 k-groups
    /// and two steps (128 blocks of 256 threads). The single matmul
    /// prefetches the lines of its threads' first 8 steps into L2 before the
    /// wait (one line a thread a step: 33.5 MB of the down projection's 58.7
    /// at that shard): launched early behind the pair, the block took 44.4
    /// instead of 46.7 µs on one H200 (2 to 16 steps swept;
    /// bench/results/2026-11-27-linear-prefetch-h200.md). The pair
    /// prefetches its first 4 steps where an all-reduce launches it early
    /// (the decoder's, behind the post-attention norm): on 2x H200 the n x k
    /// decoder half-layer took 57.5 instead of 58.3-58.8 µs at one token,
    /// and 8 steps 59.6-59.7 (bench/results/2026-11-27-linear-decoder-h200x2.md).
    pub const PAIR_LINEAR: GemvTile = GemvTile {
        engine: Engine::CudaCores,
        columns: 64,
        k_groups: 32,
        unroll: 1,
        rows: 1,
        prefetch: 4,
        stage_rows: 0,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
    };
    pub const SINGLE_LINEAR: GemvTile = GemvTile {
        columns: 32,
        k_groups: 64,
        unroll: 2,
        prefetch: 8,
        ..GemvTile::PAIR_LINEAR
    };
    /// The same for calls of 2 to 4 rows: 16 columns, one step in flight
    /// (each thread holds 4 rows' sums of 8 columns). Measured against
    /// cuBLAS like every GEMV: on one H200 it loses at the Llama-3-8B TP-2
    /// shard (the pair 49-50 against 45-46 µs) and wins at narrow ones (a
    /// 2064 x 1000 pair 9.3 against 12.8 µs).
    pub const LINEAR_FEW: GemvTile = GemvTile {
        columns: 16,
        k_groups: 64,
        unroll: 1,
        rows: 4,
        prefetch: 0,
        ..GemvTile::PAIR_LINEAR
    };
    pub const SINGLE: GemvTile = GemvTile {
        engine: Engine::CudaCores,
        columns: 64,
        k_groups: 64,
        unroll: 2,
        rows: 1,
        prefetch: 16,
        stage_rows: 0,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
    };
    /// The same for calls of 2 to 4 rows, each thread with 4 rows'
    /// accumulators (the sweep's fastest at M = 2 and 4).
    pub const PAIR_FEW: GemvTile = GemvTile {
        engine: Engine::CudaCores,
        columns: 64,
        k_groups: 32,
        unroll: 8,
        rows: 4,
        prefetch: 0,
        stage_rows: 0,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
    };
    pub const SINGLE_FEW: GemvTile = GemvTile {
        engine: Engine::CudaCores,
        columns: 64,
        k_groups: 64,
        unroll: 4,
        rows: 4,
        prefetch: 0,
        stage_rows: 0,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
    };

    /// The same on the tensor cores, for calls of 2 to 16 rows (and the
    /// tilings of a first sweep: bench/results/2026-11-26-mma-gemv-h200.md).
    pub const PAIR_MMA: GemvTile = GemvTile {
        engine: Engine::TensorCores,
        columns: 64,
        k_groups: 8,
        unroll: 2,
        rows: 16,
        prefetch: 0,
        stage_rows: 0,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
    };
    /// The tensor-core GEMVs of weights stored n x k (`gemv_mma_linear`),
    /// for calls of 2 to 16 rows: the pair's warps 64 columns each, in 6
    /// k-groups of one 32-element step (112 blocks of 384 threads at the
    /// Llama-3-8B TP-2 shard); the single matmul's warps 32 columns, in 16
    /// k-groups of 2 contiguous steps (128 blocks of 512 threads for its
    /// 4096 columns). The fastest of sweeps on one H200
    /// (bench/results/2026-11-27-linear-mma-h200.md). The single matmul
    /// prefetches the lines of each warp's first 4 iterations into L2
    /// before the wait (a line of each of its rows an iteration): launched
    /// early behind the pair, the block took 1.5-2.5 µs less at 2-16 rows on
    /// one H200 (1 to 8 swept; bench/results/2026-11-27-linear-prefetch-h200.md;
    /// session 22 had measured a prefetch of the 64-block tiling no faster).
    /// The pair prefetches nothing (its staged prologue comes first).
    pub const PAIR_MMA_LINEAR: GemvTile = GemvTile {
        k_groups: 6,
        unroll: 1,
        prefetch: 0,
        ..GemvTile::PAIR_MMA
    };
    pub const SINGLE_MMA_LINEAR: GemvTile = GemvTile {
        columns: 32,
        k_groups: 16,
        unroll: 2,
        prefetch: 4,
        ..GemvTile::SINGLE_MMA
    };
    pub const SINGLE_MMA: GemvTile = GemvTile {
        engine: Engine::TensorCores,
        columns: 64,
        k_groups: 16,
        unroll: 2,
        rows: 16,
        prefetch: 8,
        stage_rows: 0,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
    };

    /// The single matmul's GEMV with the weight streamed by the TMA
    /// (`gemv_tma`), for calls of 2 to 16 rows where the runtime has the
    /// weight's descriptor: 4 stages of 128 rows (a probe's best was 4 of
    /// 256, bench/results/2026-11-26-tma-probe-h200.md; here the staged
    /// rows of `a` share the memory). On one H200 the Llama-3-8B down
    /// projection's two split-K slices at 2 and 16 rows take 16.6-17.8 µs
    /// against 18.4-19.8 for `mma16` (bench/results/2026-11-26-tma-gemv-h200.md).
    pub const SINGLE_TMA: GemvTile = GemvTile {
        engine: Engine::Tma,
        columns: 64,
        k_groups: 4,
        unroll: 4,
        rows: 16,
        prefetch: 512,
        stage_rows: 128,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
    };

    /// The single matmul's GEMV on the warpgroup tensor cores (`wgmma`,
    /// sm_90a), for calls of up to `rows` rows (16, 64 or 128; the weight's
    /// descriptor from the runtime): 4 stages of 128 weight rows, the
    /// fastest of the probe's sweep at 16, 64 and 128 rows for the
    /// Llama-3-8B down projection's two slices on one H200
    /// (bench/results/2026-11-27-wgmma-gemv-h200.md). Its prefetch is a
    /// weight line for each of its 160 threads.
    pub const SINGLE_WGMMA: GemvTile = GemvTile {
        engine: Engine::Wgmma,
        columns: 64,
        k_groups: 1,
        unroll: 4,
        rows: 128,
        prefetch: 160,
        stage_rows: 128,
        stage_a: false,
        calls: 0,
        evict_first: true,
        ahead: 0,
    };

    /// The wgmma GEMV that single matmuls of a short grid take for calls
    /// of 2 to 16 rows (`SHORT_GRID_BLOCKS`, `wgmma-gemv-short`): 16 rows,
    /// a ring of 8 stages of 128 weight rows (16 KB each; 6 stages read
    /// TP 2's o_proj in 7.1-7.2 µs, 4 in 7.9, on one H200).
    pub const SHORT_WGMMA: GemvTile = GemvTile {
        rows: 16,
        calls: 16,
        unroll: 8,
        ..GemvTile::SINGLE_WGMMA
    };

    /// Whether the TMA streams the weight (`Tma`, `Wgmma`): the kernel
    /// then takes each weight's descriptor from the runtime as an extra
    /// parameter, and a call runs it only where the runtime has them.
    pub fn streams_by_tma(&self) -> bool {
        matches!(self.engine, Engine::Tma | Engine::Wgmma)
    }

    /// The most rows of a call the kernel takes.
    pub fn takes(&self) -> u64 {
        match self.calls {
            0 => self.rows,
            calls => calls.min(self.rows),
        }
    }
    /// On the tensor cores, the columns of a warp: 64, or 32 where the
    /// block's are not a multiple of 64 (only the GEMV of weights stored
    /// n x k takes that: `SkinnyMatmul::gemv_problem`).
    pub(super) fn warp_columns(&self) -> u64 {
        if self.columns.is_multiple_of(MMA_COLUMNS) {
            MMA_COLUMNS
        } else {
            MMA_COLUMNS / 2
        }
    }
    fn pieces(&self, weights: u64) -> u64 {
        weights * self.columns / PIECE
    }
    pub fn threads(&self, weights: u64) -> u64 {
        match self.engine {
            Engine::CudaCores => self.pieces(weights) * self.k_groups,
            Engine::TensorCores => {
                weights * (self.columns / self.warp_columns()) * self.k_groups * super::kernel::WARP
            }
            Engine::Tma => (super::gemv_tma::consumer_warps(self) + 1) * super::kernel::WARP,
            Engine::Wgmma => super::gemv_wgmma::threads(),
        }
    }
    /// Bytes between two rows of `a` that the tensor-core GEMV stages in
    /// shared memory (bf16 rows of K, a multiple of 16, padded to 128
    /// bytes and then by 32, so that the eight rows of a fragment's loads
    /// fall in different banks).
    pub(super) fn staged_row_stride(k: u64) -> u64 {
        (k * 2).next_multiple_of(128) + 32
    }
    /// Shared memory: on the CUDA cores the rows of `a` (f32), then the
    /// k-groups' sums (f32), then the row statistics (f32). On the tensor
    /// cores the sums start at 0: with a prologue they take the place of
    /// the rows of `a` (bf16, normalized once by the block) once the loop
    /// is done; without one `a` is read from global memory. Where the
    /// sums start:
    pub(super) fn sums_offset(&self, shape: &GemvShape) -> u64 {
        match self.engine {
            Engine::CudaCores => self.rows * shape.k * 4,
            Engine::TensorCores | Engine::Tma | Engine::Wgmma => 0,
        }
    }
    fn sums_bytes(&self, weights: u64) -> u64 {
        match self.engine {
            Engine::CudaCores | Engine::Tma | Engine::Wgmma => {
                self.k_groups * self.rows * weights * self.columns * 4
            }
            Engine::TensorCores => self.threads(weights) * super::gemv_mma::LANE_WORDS * 4,
        }
    }
    /// Where the row statistics start.
    pub(super) fn statistics_offset(&self, shape: &GemvShape) -> u64 {
        let sums_end = self.sums_offset(shape) + self.sums_bytes(shape.weights);
        match self.engine {
            Engine::TensorCores if (shape.staged && !shape.streamed) || self.stage_a => {
                sums_end.max(self.rows * Self::staged_row_stride(shape.k))
            }
            Engine::Tma => super::gemv_tma::RingLayout::of(self, shape)
                .end
                .max(sums_end),
            Engine::Wgmma => super::gemv_wgmma::RingLayout::of(self, shape)
                .end
                .max(sums_end),
            _ => sums_end,
        }
    }
    /// Where the tensor-core GEMV that applies the norm as it reads `a`
    /// (`GemvShape::streamed`) keeps each k-group's part of each row's
    /// statistic (f32, k-group by k-group): after the statistics.
    pub(super) fn statistic_parts_offset(&self, shape: &GemvShape) -> u64 {
        self.statistics_offset(shape) + self.rows * 4
    }
    fn statistic_parts_bytes(&self, shape: &GemvShape) -> u64 {
        if self.engine == Engine::TensorCores && shape.streamed {
            self.k_groups * self.rows * 4
        } else {
            0
        }
    }
    /// The shared memory a block takes.
    pub fn shared_bytes(&self, shape: &GemvShape) -> u64 {
        self.statistic_parts_offset(shape) + self.statistic_parts_bytes(shape)
    }
    /// Whether the block's shared memory leaves too little L1 for the
    /// loads in flight of a GEMV that streams its weight into registers
    /// (the CUDA and tensor cores; the TMA's copies land in shared memory):
    /// above `L1_KEEPING_SHARED` the SM's carveout leaves 28 KB of L1.
    pub fn starves_l1(&self, shape: &GemvShape) -> bool {
        matches!(self.engine, Engine::CudaCores | Engine::TensorCores)
            && self.shared_bytes(shape) > L1_KEEPING_SHARED
    }
    /// Why this tiling cannot run for `weights` weights at any K (`None`:
    /// it can): an error in the options that set it.
    pub fn tiling_problem(&self, weights: u64) -> Option<String> {
        if self.columns == 0 || !self.columns.is_multiple_of(PIECE) {
            return Some(format!(
                "gemv-columns = {} is not a positive multiple of 8",
                self.columns
            ));
        }
        if self.k_groups == 0 || self.unroll == 0 || self.rows == 0 {
            return Some("a GEMV needs k-groups, loads in flight and rows".into());
        }
        if self.engine == Engine::Tma {
            if let Some(problem) = super::gemv_tma::tiling_problem(self) {
                return Some(problem);
            }
        } else if self.engine == Engine::Wgmma {
            if let Some(problem) = super::gemv_wgmma::tiling_problem(self) {
                return Some(problem);
            }
        } else if self.engine == Engine::TensorCores {
            if !self.columns.is_multiple_of(MMA_COLUMNS / 2) {
                return Some(format!(
                    "mma-gemv-columns = {} is not a multiple of 32 (a warp's columns: 64, or 32 for weights stored n x k)",
                    self.columns
                ));
            }
            if self.rows != 8 && self.rows != 16 {
                return Some(format!(
                    "the tensor-core GEMV takes 8 or 16 rows, not {}",
                    self.rows
                ));
            }
        }
        let threads = self.threads(weights);
        if threads > 1024 || !threads.is_multiple_of(32) {
            return Some(format!(
                "the GEMV's {} columns x {} k-groups make {threads} threads per block for {weights} weight(s) (whole warps, at most 1024)",
                self.columns, self.k_groups
            ));
        }
        None
    }

    /// Why this tiling cannot run `k` rows of `weights` weights (`None`:
    /// it can).
    pub fn problem(&self, shape: &GemvShape) -> Option<String> {
        let (k, weights) = (shape.k, shape.weights);
        if let Some(problem) = self.tiling_problem(weights) {
            return Some(problem);
        }
        if self.shared_bytes(shape) > super::kernel::MAX_SHARED {
            return Some(match self.engine {
                Engine::CudaCores => {
                    format!(
                        "{} row(s) of K = {k} do not fit in shared memory as f32",
                        self.rows
                    )
                }
                Engine::TensorCores | Engine::Tma | Engine::Wgmma => format!(
                    "{} row(s) of K = {k} as bf16, the sums or the weight's stages do not fit in shared memory",
                    self.rows
                ),
            });
        }
        None
    }
}

/// The most shared memory a block of a GEMV that streams its weight into
/// registers takes where it can choose: Hopper's SM splits 256 KB between
/// L1 and shared memory in steps (132, 164, 196, 228 KB of shared memory),
/// and a block's request plus 1 KB that the system reserves picks the step.
/// Up to the 196 KB step (60 KB of L1) the GEMVs' loop reads as fast as
/// with no shared memory at all; from the 228 KB step (28 KB of L1) its
/// 16-byte loads in flight, which pass through L1 even with
/// `L1::no_allocate`, read the gate/up pair's bands at 3.67 instead of
/// 4.10 TB/s and the down projection's at 3.65 instead of 3.80 (one H200,
/// bench/gemv_probe/band_read.cu with BAND_SMEM;
/// bench/results/2026-11-28-l1-carveout-h200.md).
pub const L1_KEEPING_SHARED: u64 = (196 - 1) * 1024;

/// What a GEMV's shared memory depends on beyond its tiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GemvShape {
    /// K of one slice.
    pub k: u64,
    pub weights: u64,
    /// Whether the rows of `a` go through a prologue (the tensor-core
    /// GEMV then stages them in shared memory, unless `streamed`).
    pub staged: bool,
    /// Whether the prologue is a row factor times column factors that the
    /// tensor-core GEMV applies as it reads `a` (`SkinnyMatmul::stream_norm`):
    /// it then stages no rows, and keeps each k-group's part of the row
    /// statistics after the statistics.
    pub streamed: bool,
}

#[cfg(test)]
impl GemvShape {
    /// A TP-2 rank's Llama-3-8B gate/up pair (with its RMSNorm prologue)
    /// and down projection slice, for the tilings' tests.
    pub(super) const LLAMA_PAIR: GemvShape = GemvShape {
        k: 4096,
        weights: 2,
        staged: true,
        streamed: false,
    };
    pub(super) const LLAMA_DOWN: GemvShape = GemvShape {
        k: 3584,
        weights: 1,
        staged: false,
        streamed: false,
    };
}

impl SkinnyMatmul {
    /// The sizes its GEMVs' shared memory depends on.
    pub fn gemv_shape(&self) -> GemvShape {
        GemvShape {
            k: self.k,
            weights: self.weights,
            staged: self.prologue.is_some(),
            streamed: self.stream_norm && self.prologue_splits(),
        }
    }

    /// Whether the prologue is a row factor times column factors
    /// (`Prologue::row_scale`).
    fn prologue_splits(&self) -> bool {
        self.prologue
            .as_ref()
            .is_some_and(|p| p.row_scale.is_some())
    }

    /// Whether every row of `a` (and every split-K slice of it) starts on
    /// a 16-byte boundary, as kernels that stage or hold rows in 16-byte
    /// vectors need; why not, where it does not.
    pub(super) fn rows_vector_problem(&self) -> Option<String> {
        let vectors = self.lda.is_multiple_of(PIECE) && self.a_slice.is_multiple_of(PIECE);
        (!vectors).then(|| "the rows of `a` are staged in 16-byte vectors".to_owned())
    }

    /// The name of the GEMV kernel for up to `rows` rows.
    pub fn gemv_name(&self, tile: GemvTile) -> String {
        let kind = match tile.engine {
            Engine::CudaCores => "gemv",
            Engine::TensorCores => "mma",
            Engine::Tma => "tma",
            Engine::Wgmma => "wgmma",
        };
        let staged = if tile.stage_a { "_staged" } else { "" };
        format!("{}_{kind}{}{staged}", self.name, tile.rows)
    }

    /// Why GEMV `tile` cannot run this matmul (`None`: it can): the
    /// tiling's problem at this shape, then its weights' layout's, then
    /// (a tiling that stages `a` without a prologue) the rows' alignment.
    pub fn gemv_problem(&self, tile: GemvTile) -> Option<String> {
        tile.problem(&self.gemv_shape())
            .or_else(|| {
                if self.weight_transposed {
                    self.linear_gemv_problem(tile)
                } else {
                    self.row_major_gemv_problem(tile)
                }
            })
            .or_else(|| tile.stage_a.then(|| self.rows_vector_problem()).flatten())
    }

    /// Why GEMV `tile` cannot read weights stored k x n.
    fn row_major_gemv_problem(&self, tile: GemvTile) -> Option<String> {
        match tile.engine {
            Engine::Tma => super::gemv_tma::matmul_problem(self, tile),
            Engine::Wgmma => super::gemv_wgmma::matmul_problem(self, tile),
            Engine::TensorCores if tile.warp_columns() != MMA_COLUMNS => Some(format!(
                "the tensor-core GEMV of weights stored k x n takes a multiple of 64 columns, not {}",
                tile.columns
            )),
            Engine::TensorCores | Engine::CudaCores => None,
        }
    }

    /// Why GEMV `tile` cannot read weights stored n x k (`gemv_linear`,
    /// `gemv_mma_linear`).
    fn linear_gemv_problem(&self, tile: GemvTile) -> Option<String> {
        if !self.k.is_multiple_of(PIECE) || self.slices != 1 {
            return Some(format!(
                "K = {} of weights stored n x k is read in 16-byte pieces along their rows, in one slice",
                self.k
            ));
        }
        match tile.engine {
            Engine::TensorCores if self.gemv_shape().streamed => Some(
                "the tensor-core GEMV of weights stored n x k stages its rows of `a` (it does not apply the norm as it reads them)"
                    .into(),
            ),
            Engine::TensorCores => None,
            Engine::CudaCores if !tile.k_groups.is_multiple_of(super::kernel::WARP) => {
                Some(format!(
                    "{} k-groups are not whole warps (a warp reads one piece's weight rows)",
                    tile.k_groups
                ))
            }
            Engine::CudaCores => None,
            Engine::Tma | Engine::Wgmma => Some(
                "only the CUDA-core and the register-streaming tensor-core GEMVs read weights stored n x k"
                    .into(),
            ),
        }
    }

    /// The GEMVs this matmul runs for `tiles` (ordered by the rows they
    /// take): each as `gemv_tile_for` makes it, and a tiling that makes the
    /// same kernel as the next one merged into it.
    pub fn gemv_tiles_for(&self, tiles: &[GemvTile]) -> Vec<GemvTile> {
        let mut merged: Vec<GemvTile> = Vec::new();
        for tile in tiles.iter().map(|t| self.gemv_tile_for(*t)) {
            match merged.last_mut() {
                Some(last) if GemvTile { calls: 0, ..*last } == GemvTile { calls: 0, ..tile } => {
                    *last = tile;
                }
                _ => merged.push(tile),
            }
        }
        merged
    }

    /// The GEMV this matmul runs for `tile`: a tensor-core GEMV that would
    /// stage `a` without a prologue (`GemvTile::stage_a`) reads it from
    /// global memory instead where the staged rows cannot run (they do not
    /// fit in shared memory, or are not in 16-byte vectors) or would take
    /// the L1 its loads need (`GemvTile::starves_l1`); with a prologue the
    /// rows go through it either way, and the flag is off. Then, where its
    /// grid would waste a wave, it takes bands twice as wide
    /// (`SkinnyMatmul::gemv_widened`, `waves`).
    pub fn gemv_tile_for(&self, tile: GemvTile) -> GemvTile {
        let unstaged = GemvTile {
            stage_a: false,
            ..tile
        };
        let starves = tile.starves_l1(&self.gemv_shape());
        let tile = if tile.stage_a
            && (self.prologue.is_some() || starves || self.gemv_problem(tile).is_some())
        {
            unstaged
        } else {
            tile
        };
        // Widened as staged or not: every tiling of one kernel name alike.
        self.gemv_widened(tile).unwrap_or(tile)
    }

    /// Whether the tensor-core GEMV `tile` takes this matmul only by
    /// applying its norm as it reads `a` (`stream_norm`): the rows it would
    /// stage do not fit in shared memory, or would take the L1 its loads
    /// need (`GemvTile::starves_l1`), and streamed they need no room.
    /// Where they fit, staging them measured faster (on one H200 the
    /// Llama-3-8B pair at 2-16 rows 0.5-1.3 µs;
    /// bench/results/2026-11-27-stream-norm-h200.md).
    pub fn norm_must_stream(&self, tile: GemvTile) -> bool {
        if tile.engine != Engine::TensorCores || !self.prologue_splits() {
            return false;
        }
        let with = |stream_norm| SkinnyMatmul {
            stream_norm,
            ..self.clone()
        };
        let (staged, streamed) = (with(false), with(true));
        let staging_loses =
            staged.gemv_problem(tile).is_some() || tile.starves_l1(&staged.gemv_shape());
        staging_loses && streamed.gemv_problem(tile).is_none()
    }

    /// GEMV `tile`'s prefetched loads: the tiling's where the kernel is
    /// launched early (`grid_dependency`: sm_90 and up), a pair's (and a
    /// single matmul's with a prologue, which stages its rows as a pair
    /// does) only where every call it takes follows an all-reduce that
    /// launches it as it starts (`launched_early`); none elsewhere, where
    /// they would only delay the loads themselves.
    pub fn gemv_prefetch(&self, tile: GemvTile) -> u64 {
        // n x k weights: the CUDA-core GEMV's threads take a step's lines
        // only where its k-groups make whole lines of each row.
        if self.weight_transposed
            && tile.engine == Engine::CudaCores
            && !tile.k_groups.is_multiple_of(LINE_ELEMENTS / PIECE)
        {
            return 0;
        }
        let plain = self.weights == 1 && self.prologue.is_none();
        let early = plain || tile.takes() <= self.launched_early;
        if self.grid_dependency && early {
            tile.prefetch
        } else {
            0
        }
    }

    /// Blocks of the GEMV along x (column tiles) and y (slices).
    pub fn gemv_grid(&self, tile: GemvTile) -> (u64, u64) {
        (self.n.div_ceil(tile.columns), self.slices)
    }

    /// Blocks of the GEMV in all (`gemv_grid`'s x times y).
    pub fn gemv_blocks(&self, tile: GemvTile) -> u64 {
        let (columns, slices) = self.gemv_grid(tile);
        columns * slices
    }

    /// Where this matmul takes the short-grid wgmma GEMV `short`
    /// (`GemvTile::SHORT_WGMMA`) among its GEMVs `gemvs` (ordered by the
    /// rows they take): before its first tensor-core GEMV, where that would
    /// run fewer than `SHORT_GRID_BLOCKS` blocks, as a single matmul
    /// without a prologue whose weights are stored k x n, and no wgmma GEMV
    /// takes its calls of up to 16 rows already. `Ok` with the position and
    /// the register GEMV's blocks, `Err` with why not (`None`: the rule
    /// does not concern this matmul, nothing to say).
    pub fn short_grid_wgmma(
        &self,
        gemvs: &[GemvTile],
        short: GemvTile,
    ) -> Result<(usize, u64), Option<String>> {
        let few_wgmma = gemvs
            .iter()
            .any(|g| g.engine == Engine::Wgmma && g.takes() <= short.takes());
        if self.weights != 1 || self.prologue.is_some() || self.weight_transposed || few_wgmma {
            return Err(None);
        }
        let Some(at) = gemvs.iter().position(|g| g.engine == Engine::TensorCores) else {
            return Err(None);
        };
        // The grid of 64-column bands (the wgmma GEMV's own): a register
        // GEMV widened to one wave (`gemv_widened`) keeps it.
        let blocks = self.gemv_blocks(short);
        if blocks >= SHORT_GRID_BLOCKS {
            return Err(None);
        }
        match self.gemv_problem(short) {
            None => Ok((at, blocks)),
            Some(why) => Err(Some(format!(
                "keeps the register-streaming GEMV for up to {} rows although its grid is short ({blocks} blocks): the wgmma GEMV cannot take it: {why}",
                short.takes()
            ))),
        }
    }

    /// Appends the GEMV kernel (the tensor-core kernel's parameters, then
    /// with the TMA one descriptor address per weight) to `module`.
    pub fn build_gemv<'c>(
        &self,
        e: &Emitter<'c>,
        module: Blk<'c>,
        tile: GemvTile,
    ) -> Result<(), PassError> {
        if let Some(problem) = self.problem().or_else(|| self.gemv_problem(tile)) {
            return Err(PassError::Build(format!(
                "no GEMV kernel for this matmul: {problem}"
            )));
        }
        let mut parameters = self.parameters(e);
        if tile.streams_by_tma() {
            // The weights' TMA descriptors (device addresses), and with
            // `wgmma` that of the call's rows of `a`.
            let a = u64::from(tile.engine == Engine::Wgmma);
            parameters.extend(std::iter::repeat_n(e.i64(), (self.weights + a) as usize));
        }
        if self.sends(tile) {
            // The all-reduce's pool, and whether to send (`lamport_send`).
            parameters.extend([e.pool(), e.int_type(32)]);
        }
        e.kernel(
            module,
            &self.gemv_name(tile),
            &parameters,
            (
                tile.threads(self.weights),
                symm_protocol::TWO_SHOT_MAX_BLOCKS as u64,
            ),
            |body| {
                let gemv = Gemv {
                    k: self,
                    tile,
                    e: body,
                };
                match tile.engine {
                    Engine::CudaCores if self.weight_transposed => gemv.emit_linear(),
                    Engine::CudaCores => gemv.emit(),
                    Engine::TensorCores if self.weight_transposed => gemv.emit_mma_linear(),
                    Engine::TensorCores => gemv.emit_mma(),
                    Engine::Tma => gemv.emit_tma(),
                    Engine::Wgmma => gemv.emit_wgmma(),
                }
            },
        );
        Ok(())
    }
}

/// What a thread of a CUDA-core GEMV works on: its piece of 8 columns of
/// the block's (the second weight's after the first's) and its k-group,
/// the block's first column `n0` and the piece's first `column` (of its
/// weight), the call's rows `m`, `a` and `out` at the block's slice, the
/// piece's weight, and the shared memory's rows of `a`, k-group sums and
/// row statistics.
pub(super) struct CoreThread<'c> {
    pub piece: Val<'c>,
    pub group: Val<'c>,
    pub n0: Val<'c>,
    pub column: Val<'c>,
    pub m: Val<'c>,
    pub a: Val<'c>,
    pub out: Val<'c>,
    pub weight: Val<'c>,
    pub row_of_a: Val<'c>,
    pub sums: Val<'c>,
    pub statistics: Val<'c>,
}

/// A kernel's operands at its block's split-K slice.
pub(super) struct Operands<'c> {
    /// The call's rows (i64).
    pub m: Val<'c>,
    pub a: Val<'c>,
    pub out: Val<'c>,
    pub weights: Vec<Val<'c>>,
}

pub(super) struct Gemv<'a, 'c> {
    pub(super) k: &'a SkinnyMatmul,
    pub(super) tile: GemvTile,
    pub(super) e: &'a Emitter<'c>,
}

impl<'c> Gemv<'_, 'c> {
    pub(super) fn c(&self, number: u64) -> Val<'c> {
        self.e.c64(number as i64)
    }

    /// The 16-byte piece of `weight` at `(row, column)`, streamed past L1.
    /// With an `exact` tiling every column is inside and a row past K
    /// (loads one step ahead of the last) is clamped to the last row, its
    /// piece never used; otherwise a piece past K or N reads as zero.
    pub(super) fn weight_piece(
        &self,
        e: &Emitter<'c>,
        weight: Val<'c>,
        (row, column): (Val<'c>, Val<'c>),
        exact: bool,
    ) -> Val<'c> {
        let k = self.k;
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let piece_ty = e.vector(PIECE, bf16);
        if exact {
            let row = e.min(row, self.c(k.k - 1));
            let at = e.add(e.mul(row, self.c(k.n)), column);
            return e.load_streaming_16(e.gep(weight, at, bf16), piece_ty);
        }
        let inside = e.and(
            e.cmp(CmpiPredicate::Ult, row, self.c(k.k)),
            e.cmp(CmpiPredicate::Ult, column, self.c(k.n)),
        );
        e.choose(
            inside,
            piece_ty,
            |e| {
                let at = e.add(e.mul(row, self.c(k.n)), column);
                e.load_streaming_16(e.gep(weight, at, bf16), piece_ty)
            },
            |e| e.zero(piece_ty),
        )
    }

    /// The tiling's prefetched loads (`SkinnyMatmul::gemv_prefetch`).
    pub(super) fn prefetch(&self) -> u64 {
        self.k.gemv_prefetch(self.tile)
    }

    /// Prefetches into L2 the lines of the first `self.prefetch()` weight
    /// rows (at most K) at `column` (clamped inside the weight) of every
    /// weight, the rows dealt round the block's threads: thread `tid`
    /// takes rows `tid`, `tid + threads`, ... (each a line; a thread past
    /// the last row takes it again). For the GEMVs whose weight the TMA
    /// streams; no value depends on the prefetches.
    pub(super) fn prefetch_rows(
        &self,
        e: &Emitter<'c>,
        weights: &[Val<'c>],
        tid: Val<'c>,
        column: Val<'c>,
    ) {
        let k = self.k;
        let rows = self.prefetch().min(k.k);
        if rows == 0 {
            return;
        }
        let threads = self.tile.threads(k.weights);
        let column = e.min(column, self.c(k.n.saturating_sub(8)));
        for round in 0..rows.div_ceil(threads) {
            let row = e.min(e.add(tid, self.c(round * threads)), self.c(rows - 1));
            for weight in weights {
                self.prefetch_weight(e, *weight, row, column);
            }
        }
    }

    /// Prefetches into L2 the line of `weight` that holds `(row, column)`
    /// (both inside the weight).
    pub(super) fn prefetch_weight(
        &self,
        e: &Emitter<'c>,
        weight: Val<'c>,
        row: Val<'c>,
        column: Val<'c>,
    ) {
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let at = e.add(e.mul(row, self.c(self.k.n)), column);
        e.prefetch_l2(e.gep(weight, at, bf16));
    }

    /// The call's operands at this block's split-K slice (`gpu.block_id
    /// y`): each moves by its slice stride.
    pub(super) fn operands(&self) -> Operands<'c> {
        let (e, k) = (self.e, self.k);
        let arg = |i: usize| e.arg(i);
        let weights = k.weights as usize;
        let slice = e.cast(e.block_id_y(), e.i64());
        let m = arg(2 + weights);
        let a = e.gep(arg(0), e.mul(slice, self.c(k.a_slice)), e.int_type(16));
        let out_slice = e.mul(e.mul(slice, m), self.c(k.n * k.output.bytes()));
        let out = e.gep(arg(1 + weights), out_slice, e.int_type(8));
        let weights = (0..weights)
            .map(|j| e.gep(arg(1 + j), e.mul(slice, self.c(k.w_slice)), e.int_type(16)))
            .collect();
        Operands { m, a, out, weights }
    }

    /// The weight `which` (an i64: 0, or 1 for a pair's second) of
    /// `weights`.
    pub(super) fn weight_of(&self, weights: &[Val<'c>], which: Val<'c>) -> Val<'c> {
        let e = self.e;
        if weights.len() == 1 {
            return weights[0];
        }
        let second = e.cmp(CmpiPredicate::Ne, which, self.c(0));
        e.select(second, weights[1], weights[0])
    }

    /// A CUDA-core GEMV thread's `CoreThread`, for its `piece` and k-group
    /// `group` (i64 values, however the kernel maps threads to them).
    pub(super) fn core_thread(&self, piece: Val<'c>, group: Val<'c>) -> CoreThread<'c> {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let per_weight = tile.columns / PIECE;
        let which = e.div(piece, self.c(per_weight));
        let n0 = e.mul(e.cast(e.block_id(), e.i64()), self.c(tile.columns));
        let column = e.add(n0, e.mul(e.rem(piece, self.c(per_weight)), self.c(PIECE)));
        let Operands { m, a, out, weights } = self.operands();
        let weight = self.weight_of(&weights, which);
        let row_of_a = e.dynamic_shared();
        let shape = k.gemv_shape();
        let sums = e.byte_offset(row_of_a, self.c(tile.sums_offset(&shape)));
        let statistics = e.byte_offset(row_of_a, self.c(tile.statistics_offset(&shape)));
        CoreThread {
            piece,
            group,
            n0,
            column,
            m,
            a,
            out,
            weight,
            row_of_a,
            sums,
            statistics,
        }
    }

    fn emit(&self) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let f32 = e.f32();
        let pieces = tile.pieces(k.weights);
        let threads = tile.threads(k.weights);
        let tid = e.cast(e.thread_id(), e.i64());
        let t = self.core_thread(e.rem(tid, self.c(pieces)), e.div(tid, self.c(pieces)));
        let (piece, group, column, weight, row_of_a) =
            (t.piece, t.group, t.column, t.weight, t.row_of_a);
        let rows = tile.rows;

        // Row i of this thread is i * k_groups + group; a thread has
        // `per_thread` of them, consumed `unroll` at a time.
        let per_thread = k.k.div_ceil(tile.k_groups);
        let iterations = per_thread.div_ceil(tile.unroll);
        let exact =
            k.k.is_multiple_of(tile.k_groups * tile.unroll) && k.n.is_multiple_of(tile.columns);
        // The piece of row `i` (zero past K and N).
        let load_piece = |e: &Emitter<'c>, i: Val<'c>| -> Val<'c> {
            let row = e.add(e.mul(i, self.c(tile.k_groups)), group);
            self.weight_piece(e, weight, (row, column), exact)
        };
        // The lines of the first `prefetch` rows towards L2, before the
        // wait for the grids before (no value depends on them). A line
        // holds the pieces of 8 threads: thread q of a line (its piece
        // within it) prefetches row i = 8 j + q of the thread's rows.
        let per_line = MMA_COLUMNS / PIECE;
        let prefetches = self.prefetch().div_ceil(per_line);
        if prefetches > 0 {
            let q = e.rem(piece, self.c(per_line));
            let line = e.min(
                e.sub(column, e.mul(q, self.c(PIECE))),
                self.c(k.n.saturating_sub(PIECE)),
            );
            for j in 0..prefetches {
                let i = e.add(self.c(j * per_line), q);
                let row = e.min(
                    e.add(e.mul(i, self.c(tile.k_groups)), group),
                    self.c(k.k - 1),
                );
                self.prefetch_weight(e, weight, row, line);
            }
        }
        // The first loads are in flight while the row of `a` is prepared.
        let first: Vec<Val<'c>> = (0..tile.unroll).map(|u| load_piece(e, self.c(u))).collect();
        let partials = self.prepare_rows(t.m, t.a, row_of_a, t.statistics, threads);

        let accumulators = rows * PIECE;
        let mut inits = vec![e.zero(e.vector(accumulators, f32))];
        inits.extend(first);
        let carried = e.for_range_carrying_many(
            (self.c(0), self.c(iterations), self.c(1)),
            &inits,
            |e, iteration, carried| {
                let mut acc = carried[0];
                let mut next = Vec::with_capacity(tile.unroll as usize);
                for u in 0..tile.unroll {
                    let i = e.add(e.mul(iteration, self.c(tile.unroll)), self.c(u));
                    let piece = carried[1 + u as usize];
                    next.push(load_piece(e, e.add(i, self.c(tile.unroll))));
                    let row = e.add(e.mul(i, self.c(tile.k_groups)), group);
                    let wide = e.extf(piece, e.vector(PIECE, f32));
                    // Past K (guarded path only) the row's `a` reads as 0.
                    let (read_row, inside) = if exact {
                        (row, None)
                    } else {
                        let inside = e.cmp(CmpiPredicate::Ult, row, self.c(k.k));
                        (e.min(row, self.c(k.k - 1)), Some(inside))
                    };
                    for r in 0..rows {
                        let v = self.shared_f32(e, row_of_a, e.add(read_row, self.c(r * k.k)));
                        let a_value = match inside {
                            Some(inside) => e.select(inside, v, e.cf32(0.0)),
                            None => v,
                        };
                        for lane in 0..PIECE {
                            let w = e.extract(wide, lane);
                            let at = r * PIECE + lane;
                            let sum = e.one(
                                ods::math::fma(e.ctx, a_value, w, e.extract(acc, at), e.loc).into(),
                            );
                            acc = e.insert(acc, sum, at);
                        }
                    }
                }
                let mut out = vec![acc];
                out.extend(next);
                out
            },
        );
        self.finish(&t, carried[0], &partials);
    }

    /// With `grid_dependency`: the next grid may launch once every block
    /// streamed its weight. Its blocks then become resident on the SMs
    /// this grid leaves free and wait there for it to complete
    /// (`symm-wait-for-prior-grids` put the wait first in every kernel).
    pub(super) fn let_next_grid_launch(&self) {
        if self.k.grid_dependency {
            self.e.grid_dependency(true);
        }
    }

    /// The rows of `a` in shared memory as f32 (row r at r * K): through
    /// the prologue (each row's statistic reduced by the block first) when
    /// there is one. Rows past `m` are zero.
    /// With the row factor moved after the products (`row_scale`), the
    /// rows hold only the column factors and this returns each row's
    /// thread partial of its statistic, for `finish` to reduce after the
    /// loop; otherwise nothing.
    pub(super) fn prepare_rows(
        &self,
        m: Val<'c>,
        a: Val<'c>,
        row_of_a: Val<'c>,
        statistics: Val<'c>,
        threads: u64,
    ) -> Vec<Val<'c>> {
        if self.rows_fit_registers(threads) {
            self.prepare_rows_held(m, a, row_of_a, threads)
        } else {
            self.prepare_rows_looped(m, a, row_of_a, statistics, threads);
            Vec::new()
        }
    }

    /// Whether every thread can hold its share of a row of `a` in
    /// registers as 16-byte vectors (at most `HELD_VECTORS`), loaded at
    /// once: the row then costs one trip to memory, not one per pass.
    fn rows_fit_registers(&self, threads: u64) -> bool {
        let k = self.k;
        k.k.is_multiple_of(PIECE)
            && k.rows_vector_problem().is_none()
            && (k.k / PIECE).div_ceil(threads) <= HELD_VECTORS
    }

    /// `prepare_rows` with each thread's vectors of the row loaded at once
    /// and kept: the statistic's block sum and the prologue's elements
    /// both come from those registers, so the row is read from memory
    /// once, in one round of loads, while the weight's first pieces are in
    /// flight.
    fn prepare_rows_held(
        &self,
        m: Val<'c>,
        a: Val<'c>,
        row_of_a: Val<'c>,
        threads: u64,
    ) -> Vec<Val<'c>> {
        let (e, k) = (self.e, self.k);
        let row_scale = self.row_scale();
        let mut partials = Vec::new();
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let f32 = e.f32();
        let tid = e.cast(e.thread_id(), e.i64());
        let (init, column_operands) = self.prologue_parameters();
        let vectors = k.k / PIECE;
        let held = vectors.div_ceil(threads);
        for r in 0..self.tile.rows {
            let present = e.cmp(CmpiPredicate::Ult, self.c(r), m);
            let row = e.gep(a, self.c(r * k.lda), bf16);
            let loaded: Vec<(Val<'c>, Val<'c>, Val<'c>)> = (0..held)
                .map(|j| {
                    let v = e.add(tid, self.c(j * threads));
                    let exists = e.cmp(CmpiPredicate::Ult, v, self.c(vectors));
                    let inside = e.and(exists, present);
                    let at = e.mul(v, self.c(PIECE));
                    (v, exists, row_piece(e, row, at, inside))
                })
                .collect();
            let partial = k.prologue.as_ref().map(|prologue| {
                let mut partial = e.cf32(0.0);
                for (_, exists, vector) in &loaded {
                    // Vectors past the row are zero, but the step need not
                    // ignore zeros (it may not be a plain sum of x).
                    let mut sum = partial;
                    for lane in 0..PIECE {
                        sum = e.call(&prologue.step, &[e.extract(*vector, lane), sum], f32);
                    }
                    partial = e.select(*exists, sum, partial);
                }
                e.select(present, partial, e.cf32(0.0))
            });
            // The thread's part of the statistic, or the statistic itself:
            // with the row scale it is reduced after the loop (`finish`).
            let statistic = partial
                .zip(init)
                .and_then(|(partial, init)| match row_scale {
                    Some(_) => {
                        partials.push(partial);
                        None
                    }
                    None => Some(e.addf(init, e.block_sum(partial))),
                });
            for (v, exists, vector) in loaded {
                let mut elements = vector;
                if let (Some(prologue), Some(functions)) = (&k.prologue, row_scale) {
                    // (Clamped into the row: a vector past it is not stored.)
                    let start = e.min(e.mul(v, self.c(PIECE)), self.c(k.k - PIECE));
                    let pieces = prologue.column_pieces(e, &column_operands, start);
                    for lane in 0..PIECE {
                        let x = e.extract(vector, lane);
                        let y = prologue.column_factors(e, functions, x, &pieces, lane);
                        elements = e.insert(elements, y, lane);
                    }
                } else if let (Some(prologue), Some(statistic)) = (&k.prologue, statistic) {
                    for lane in 0..PIECE {
                        let column = e.add(e.mul(v, self.c(PIECE)), self.c(lane));
                        let x = e.extract(vector, lane);
                        let y = prologue.element(e, x, statistic, &column_operands, column);
                        elements = e.insert(elements, y, lane);
                    }
                }
                let wide = e.extf(elements, e.vector(PIECE, f32));
                let wide = e.select(present, wide, e.zero(e.vector(PIECE, f32)));
                e.when(exists, |e| {
                    let at = e.add(e.mul(v, self.c(PIECE)), self.c(r * k.k));
                    e.store(wide, e.byte_offset(row_of_a, e.mul(at, self.c(4))), 16);
                });
            }
        }
        e.sync_threads();
        partials
    }

    /// The prologue's factor functions where the kernel stages only the
    /// column factors of `a` and scales the sums by the row factor
    /// (`row_scale`), for a prologue that splits so.
    pub(super) fn row_scale(&self) -> Option<&RowScaleFunctions> {
        // The CUDA cores' rows held in registers (`prepare_rows_held`)
        // take it too; the looped preparation keeps the whole element.
        if self.tile.engine == Engine::CudaCores
            && !self.rows_fit_registers(self.tile.threads(self.k.weights))
        {
            return None;
        }
        self.k.prologue.as_ref()?.row_scale.as_ref()
    }

    /// The prologue's init value and column operands (kernel parameters).
    pub(super) fn prologue_parameters(&self) -> (Option<Val<'c>>, Vec<Val<'c>>) {
        let (e, k) = (self.e, self.k);
        let init = k.prologue.as_ref().map(|_| e.arg(3 + k.weights as usize));
        let column_operands: Vec<Val<'c>> = k.prologue.as_ref().map_or(Vec::new(), |p| {
            (0..p.columns.len())
                .map(|i| e.arg(4 + k.weights as usize + i))
                .collect()
        });
        (init, column_operands)
    }

    /// `prepare_rows` for rows too long to hold (or not in 16-byte
    /// vectors): the statistic in one pass over the row, the elements in
    /// a second, element by element.
    fn prepare_rows_looped(
        &self,
        m: Val<'c>,
        a: Val<'c>,
        row_of_a: Val<'c>,
        statistics: Val<'c>,
        threads: u64,
    ) {
        let (e, k) = (self.e, self.k);
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let f32 = e.f32();
        let tid = e.cast(e.thread_id(), e.i64());
        let (init, column_operands) = self.prologue_parameters();
        for r in 0..self.tile.rows {
            let present = e.cmp(CmpiPredicate::Ult, self.c(r), m);
            let row = e.gep(a, self.c(r * k.lda), bf16);
            let statistic_at = e.byte_offset(statistics, self.c(r * 4));
            let statistic_value = k.prologue.as_ref().zip(init).map(|(prologue, init)| {
                let vectors = e.select(present, self.c(k.k / PIECE), self.c(0));
                let partial = e.for_range_carrying(
                    tid,
                    vectors,
                    self.c(threads),
                    e.cf32(0.0),
                    |e, v, acc| {
                        let at = e.mul(v, self.c(PIECE));
                        let vector = e.load(e.gep(row, at, bf16), e.vector(PIECE, bf16), 16);
                        let mut acc = acc;
                        for lane in 0..PIECE {
                            let x = e.extract(vector, lane);
                            acc = e.call(&prologue.step, &[x, acc], f32);
                        }
                        acc
                    },
                );
                let total = e.block_sum(partial);
                let value = e.addf(init, total);
                let first = e.cmp(CmpiPredicate::Eq, tid, self.c(0));
                e.when(first, |e| e.store(value, statistic_at, 4));
                e.sync_threads();
                e.load(statistic_at, f32, 4)
            });
            e.for_range(tid, self.c(k.k), self.c(threads), |e, index| {
                let element = e.choose(
                    present,
                    f32,
                    |e| {
                        let x = e.load(e.gep(row, index, bf16), bf16, 2);
                        let element = match (&k.prologue, statistic_value) {
                            (Some(prologue), Some(statistic)) => {
                                prologue.element(e, x, statistic, &column_operands, index)
                            }
                            _ => x,
                        };
                        e.extf(element, f32)
                    },
                    |e| e.cf32(0.0),
                );
                let at = e.add(index, self.c(r * k.k));
                e.store(element, e.byte_offset(row_of_a, e.mul(at, self.c(4))), 4);
            });
        }
        e.sync_threads();
    }

    pub(super) fn shared_f32(&self, e: &Emitter<'c>, base: Val<'c>, index: Val<'c>) -> Val<'c> {
        e.load(e.byte_offset(base, e.mul(index, self.c(4))), e.f32(), 4)
    }

    /// After a CUDA-core GEMV thread's loop: the next grid may launch, the
    /// k-groups' sums meet in shared memory (the thread's `acc`, each
    /// row's statistic reduced from the `partials` `prepare_rows` left with
    /// `row_scale`), and each thread then writes whole elements of the
    /// block's columns, row by row.
    pub(super) fn finish(&self, t: &CoreThread<'c>, acc: Val<'c>, partials: &[Val<'c>]) {
        self.let_next_grid_launch();
        let e = self.e;
        let CoreThread {
            piece,
            group,
            n0,
            m,
            out,
            sums,
            statistics,
            ..
        } = *t;
        let (init, _) = self.prologue_parameters();
        if let Some(init) = init {
            let first = e.cmp(CmpiPredicate::Eq, e.cast(e.thread_id(), e.i64()), self.c(0));
            for (r, partial) in partials.iter().enumerate() {
                let statistic = e.addf(init, e.block_sum(*partial));
                let at = e.byte_offset(statistics, self.c(r as u64 * 4));
                e.when(first, |e| e.store(statistic, at, 4));
            }
        }
        for r in 0..self.tile.rows {
            for lane in 0..PIECE {
                let column = e.add(e.mul(piece, self.c(PIECE)), self.c(lane));
                let v = e.extract(acc, r * PIECE + lane);
                e.store(v, self.sum_slot(e, sums, group, self.c(r), column), 4);
            }
        }
        e.sync_threads();
        self.write_out(m, out, n0, sums);
    }

    /// Where the sum of k-group `group`, row `row` and column `column` of
    /// the block (the second weight's columns after the first's) sits.
    pub(super) fn sum_slot(
        &self,
        e: &Emitter<'c>,
        sums: Val<'c>,
        group: Val<'c>,
        row: Val<'c>,
        column: Val<'c>,
    ) -> Val<'c> {
        if self.tile.engine == Engine::TensorCores {
            return self.mma_sum_slot(e, sums, group, row, column);
        }
        // The CUDA cores' and the TMA GEMV's: plain f32 rows per k-group.
        let width = self.k.weights * self.tile.columns;
        let at = e.add(
            e.mul(
                e.add(e.mul(group, self.c(self.tile.rows)), row),
                self.c(width),
            ),
            column,
        );
        e.byte_offset(sums, e.mul(at, self.c(4)))
    }

    /// Each thread writes whole elements of the block's columns, row by
    /// row: the k-groups' sums (in shared memory, all stored) added up,
    /// through the epilogue when there is one.
    pub(super) fn write_out(&self, m: Val<'c>, out: Val<'c>, n0: Val<'c>, sums: Val<'c>) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let f32 = e.f32();
        let tid = e.cast(e.thread_id(), e.i64());
        let threads = self.c(tile.threads(k.weights));
        let elements = self.c(tile.rows * tile.columns);
        let lamport = self.lamport_target(m);
        e.for_range(tid, elements, threads, |e, index| {
            let row = e.div(index, self.c(tile.columns));
            let column = e.rem(index, self.c(tile.columns));
            let inside = e.and(
                e.cmp(CmpiPredicate::Ult, row, m),
                e.cmp(CmpiPredicate::Ult, e.add(n0, column), self.c(k.n)),
            );
            e.when(inside, |e| {
                // The row's factor of the prologue, where the staged rows
                // hold only its column factors.
                let scale = self
                    .row_scale()
                    .zip(k.prologue.as_ref())
                    .map(|(functions, p)| {
                        let statistic = if self.streams_norm() {
                            self.streamed_statistic(e, row)
                        } else {
                            let statistics = e.byte_offset(
                                e.dynamic_shared(),
                                self.c(tile.statistics_offset(&k.gemv_shape())),
                            );
                            e.load(e.byte_offset(statistics, e.mul(row, self.c(4))), f32, 4)
                        };
                        p.row_factor(e, functions, statistic)
                    });
                let products: Vec<Val<'c>> = (0..k.weights)
                    .map(|j| {
                        let column = e.add(column, self.c(j * tile.columns));
                        let slot = |g: u64| self.sum_slot(e, sums, self.c(g), row, column);
                        let mut sum = e.load(slot(0), f32, 4);
                        for g in 1..tile.k_groups {
                            sum = e.addf(sum, e.load(slot(g), f32, 4));
                        }
                        match scale {
                            Some(scale) => e.mulf(sum, scale),
                            None => sum,
                        }
                    })
                    .collect();
                let result = k.output_element(e, &products);
                let bytes = k.output.bytes();
                let at = e.add(e.mul(row, self.c(k.n)), e.add(n0, column));
                e.store(result, e.byte_offset(out, e.mul(at, self.c(bytes))), bytes);
                if let Some(lamport) = &lamport {
                    self.send_element(e, lamport, at, result);
                }
            });
        });
    }
}

/// The 16-byte piece of a row of `a` (bf16) at element `at`, or zero where
/// `inside` is false (past the row, or a row the call does not have).
pub(super) fn row_piece<'c>(
    e: &Emitter<'c>,
    row: Val<'c>,
    at: Val<'c>,
    inside: Val<'c>,
) -> Val<'c> {
    let bf16 = e.float(Scalar::Bf16).expect("bf16");
    let piece = e.vector(PIECE, bf16);
    e.choose(
        inside,
        piece,
        |e| e.load(e.gep(row, at, bf16), piece, 16),
        |e| e.zero(piece),
    )
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::matmul::kernel::{Epilogue, Output, Prologue, Tile};

    /// A single matmul's slice of K rows and N columns (a's rows `lda`
    /// apart), or with `norm` a pair whose prologue splits (RMSNorm).
    pub(in crate::matmul) fn matmul(k: u64, n: u64, lda: u64, norm: bool) -> SkinnyMatmul {
        let prologue = norm.then(|| Prologue {
            step: "step".into(),
            apply: "apply".into(),
            args: Vec::new(),
            columns: vec![Scalar::Bf16],
            row_scale: Some(RowScaleFunctions {
                row: "row".into(),
                columns: "columns".into(),
            }),
        });
        SkinnyMatmul {
            name: "k".into(),
            k,
            n,
            lda,
            a_slice: 0,
            w_slice: 0,
            slices: 1,
            weights: if norm { 2 } else { 1 },
            output: Output::Bf16,
            epilogue: norm.then(|| Epilogue {
                function: "epilogue".into(),
                args: Vec::new(),
            }),
            prologue,
            tile: if norm { Tile::PAIR } else { Tile::SINGLE },
            grid_dependency: false,
            stream_norm: false,
            lamport_send: None,
            launched_early: 0,
            weight_transposed: false,
        }
    }

    /// The tensor-core tilings of the default options: reading `a` from
    /// global memory for up to 8 rows, staging it for up to 16.
    pub(in crate::matmul) fn mma_tiles(kind: GemvTile) -> [GemvTile; 2] {
        [
            GemvTile { calls: 8, ..kind },
            GemvTile {
                stage_a: true,
                ..kind
            },
        ]
    }

    /// The runtime keeps its choice between the generated branch and
    /// cuBLAS per site: the same matmul with the same kernels in the same
    /// function is one site; other GEMV tilings, other kernel options or
    /// another function are another.
    #[test]
    fn a_site_is_its_matmul_and_its_generated_kernels() {
        let down = matmul(3584, 4096, 7168, false);
        let tiles = down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
        let site = |k: &SkinnyMatmul, g: &[GemvTile]| crate::matmul::site_id("f", k, g);
        assert_eq!(site(&down, &tiles), site(&down.clone(), &tiles.clone()));
        let other = [
            GemvTile {
                k_groups: 8,
                ..tiles[0]
            },
            tiles[1],
        ];
        assert_ne!(site(&down, &tiles), site(&down, &other));
        assert_ne!(site(&down, &tiles), site(&down, &[]));
        let early = SkinnyMatmul {
            grid_dependency: true,
            ..down.clone()
        };
        assert_ne!(site(&down, &tiles), site(&early, &tiles));
        assert_ne!(
            site(&down, &tiles),
            crate::matmul::site_id("g", &down, &tiles)
        );
        assert!(site(&down, &tiles) >= 0);
    }

    /// The short-grid wgmma GEMV goes before the tensor-core GEMVs of a
    /// single matmul whose register GEMV runs under 128 blocks (TP 2's
    /// o_proj: 64), not where two slices make 128 (the down projection),
    /// nor for pairs, n x k weights or where a wgmma GEMV takes 16 rows
    /// already; where it cannot read the matmul the caller gets why.
    #[test]
    fn short_grids_take_the_wgmma_ring() {
        let short = GemvTile::SHORT_WGMMA;
        assert_eq!((short.takes(), short.unroll), (16, 8));
        let o_proj = SkinnyMatmul {
            grid_dependency: true,
            ..matmul(2048, 4096, 2048, false)
        };
        let mut tiles = vec![GemvTile::SINGLE];
        tiles.extend(o_proj.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA)));
        assert_eq!(o_proj.short_grid_wgmma(&tiles, short), Ok((1, 64)));
        assert_eq!(o_proj.gemv_name(short), "k_wgmma16");
        let down = SkinnyMatmul {
            slices: 2,
            ..matmul(3584, 4096, 7168, false)
        };
        assert_eq!(down.short_grid_wgmma(&tiles, short), Err(None));
        let pair = matmul(4096, 7168, 4096, true);
        assert_eq!(pair.short_grid_wgmma(&tiles, short), Err(None));
        let transposed = SkinnyMatmul {
            weight_transposed: true,
            ..o_proj.clone()
        };
        assert_eq!(transposed.short_grid_wgmma(&tiles, short), Err(None));
        let mut with_few = tiles.clone();
        with_few.insert(1, short);
        assert_eq!(o_proj.short_grid_wgmma(&with_few, short), Err(None));
        // No tensor-core GEMV to stand before: nothing to say.
        assert_eq!(o_proj.short_grid_wgmma(&tiles[..1], short), Err(None));
        // Rows of K = 1004 are not in 16-byte vectors, which the TMA needs.
        let odd = SkinnyMatmul {
            k: 1004,
            lda: 1004,
            ..o_proj.clone()
        };
        let why = odd.short_grid_wgmma(&tiles, short).unwrap_err().unwrap();
        assert!(why.contains("grid is short (64 blocks)"), "{why}");
    }

    #[test]
    fn a_single_matmul_stages_a_from_nine_rows_where_the_rows_fit() {
        let down = matmul(3584, 4096, 7168, false);
        let tiles = down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
        assert_eq!(tiles.len(), 2);
        assert_eq!((tiles[0].takes(), tiles[0].stage_a), (8, false));
        assert_eq!((tiles[1].takes(), tiles[1].stage_a), (16, true));
        assert_eq!(down.gemv_name(tiles[0]), "k_mma16");
        assert_eq!(down.gemv_name(tiles[1]), "k_mma16_staged");
        assert!(tiles.iter().all(|t| down.gemv_problem(*t).is_none()));
        // 16 staged rows of K = 16384 do not fit, nor do rows that are not
        // in 16-byte vectors: one GEMV reads `a` from global memory for 2
        // to 16 rows, as before.
        for unstaged in [
            matmul(16384, 4096, 16384, false),
            matmul(3584, 4096, 3588, false),
        ] {
            let tiles = unstaged.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
            assert_eq!(tiles.len(), 1, "{tiles:?}");
            assert_eq!((tiles[0].takes(), tiles[0].stage_a), (16, false));
            assert!(unstaged.gemv_problem(tiles[0]).is_none());
        }
    }

    #[test]
    fn a_pair_with_a_prologue_keeps_one_tensor_core_gemv() {
        let pair = matmul(4096, 7168, 4096, true);
        let tiles = pair.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
        assert_eq!(tiles.len(), 1);
        assert_eq!((tiles[0].takes(), tiles[0].stage_a), (16, false));
        assert_eq!(pair.gemv_name(tiles[0]), "k_mma16");
        assert!(!pair.norm_must_stream(tiles[0]));
        // At K = 8192 its 16 staged rows do not fit: it streams the norm.
        let wide = matmul(8192, 7168, 8192, true);
        let tiles = wide.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
        assert_eq!(tiles.len(), 1);
        assert!(wide.gemv_problem(tiles[0]).is_some());
        assert!(wide.norm_must_stream(tiles[0]));
        let streamed = SkinnyMatmul {
            stream_norm: true,
            ..wide
        };
        assert!(streamed.gemv_shape().streamed);
        assert_eq!(streamed.gemv_problem(tiles[0]), None);
    }

    #[test]
    fn staging_that_would_starve_l1_gives_way() {
        // K = 6656 (LLaMA-30B's hidden size): the pair's 16 staged rows fit
        // in shared memory (213.5 KB), but leave the loads 28 KB of L1, so
        // the pair streams its norm instead.
        let pair = matmul(6656, 7168, 6656, true);
        let tiles = pair.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
        assert_eq!(pair.gemv_problem(tiles[0]), None);
        assert!(tiles[0].starves_l1(&pair.gemv_shape()));
        assert!(pair.norm_must_stream(tiles[0]));
        // K = 6144 stays staged: 197.2 KB, the 196 KB step's.
        let staged = matmul(6144, 7168, 6144, true);
        let tiles = staged.gemv_tiles_for(&mma_tiles(GemvTile::PAIR_MMA));
        assert!(!tiles[0].starves_l1(&staged.gemv_shape()));
        assert!(!staged.norm_must_stream(tiles[0]));
        // A down projection slice of K = 6912 (Qwen2.5-14B's MLP, 13824,
        // in two slices) reads `a` from global memory rather than staging
        // 221.7 KB of it; one of K = 3584 stages it.
        for (k, stages) in [(6912, false), (3584, true)] {
            let down = matmul(k, 4096, k, false);
            let tiles = down.gemv_tiles_for(&mma_tiles(GemvTile::SINGLE_MMA));
            let sixteen = tiles.iter().find(|t| t.takes() == 16).expect("16 rows");
            assert_eq!(sixteen.stage_a, stages, "K = {k}: {tiles:?}");
            assert!(!sixteen.starves_l1(&down.gemv_shape()));
        }
    }

    proptest::proptest! {
        /// At any K, the tensor-core GEMV a matmul runs keeps the L1 its
        /// loads need wherever it can: a staged pair or single matmul
        /// starves L1 only where its other way (the streamed norm, `a` read
        /// from global memory) cannot run.
        #[test]
        fn the_chosen_gemv_starves_l1_only_without_another_way(
            steps in 1u64..=1024,
            pair in proptest::bool::ANY,
        ) {
            let k = steps * 16;
            let kernel = matmul(k, 4096, k, pair);
            let kind = if pair { GemvTile::PAIR_MMA } else { GemvTile::SINGLE_MMA };
            for tile in kernel.gemv_tiles_for(&mma_tiles(kind)) {
                let streams = kernel.norm_must_stream(tile);
                let runs = SkinnyMatmul { stream_norm: streams, ..kernel.clone() };
                if runs.gemv_problem(tile).is_some() {
                    continue;
                }
                if tile.starves_l1(&runs.gemv_shape()) {
                    // Staged and starving: the streamed norm could not run.
                    proptest::prop_assert!(pair && !streams, "K = {k}: {tile:?}");
                    let streamed = SkinnyMatmul { stream_norm: true, ..kernel.clone() };
                    proptest::prop_assert!(streamed.gemv_problem(tile).is_some(), "K = {k}");
                }
            }
        }
    }

    fn shape(k: u64, weights: u64) -> GemvShape {
        GemvShape {
            k,
            weights,
            staged: weights == 2,
            streamed: false,
        }
    }

    #[test]
    fn the_default_tilings_fit_llama_shapes() {
        assert_eq!(GemvTile::PAIR.problem(&shape(4096, 2)), None);
        assert_eq!(GemvTile::SINGLE.problem(&shape(3584, 1)), None);
        assert_eq!(GemvTile::PAIR.threads(2), 1024);
        assert_eq!(GemvTile::SINGLE.threads(1), 512);
        assert_eq!(GemvTile::PAIR_FEW.problem(&shape(4096, 2)), None);
        assert_eq!(GemvTile::SINGLE_FEW.problem(&shape(3584, 1)), None);
        // Four rows of a 16K-wide K do not fit.
        assert!(GemvTile::SINGLE_FEW.problem(&shape(14336, 1)).is_some());
    }

    #[test]
    fn tilings_that_cannot_run_are_refused() {
        let odd = GemvTile {
            columns: 12,
            ..GemvTile::PAIR
        };
        assert!(
            odd.problem(&shape(4096, 2))
                .unwrap()
                .contains("multiple of 8")
        );
        assert!(odd.tiling_problem(1).is_some());
        let wide = GemvTile {
            k_groups: 256,
            ..GemvTile::PAIR
        };
        assert!(
            wide.problem(&shape(4096, 2))
                .unwrap()
                .contains("at most 1024")
        );
        assert!(
            GemvTile::SINGLE
                .problem(&shape(1 << 20, 1))
                .unwrap()
                .contains("shared memory")
        );
    }

    #[test]
    fn weights_stored_n_by_k_take_the_register_streaming_gemvs() {
        let linear = |k: u64, n: u64| SkinnyMatmul {
            weight_transposed: true,
            grid_dependency: true,
            ..matmul(k, n, k, false)
        };
        let down = linear(7168, 4096);
        assert_eq!(down.problem(), None);
        assert_eq!(down.gemv_problem(GemvTile::SINGLE_LINEAR), None);
        // 128 blocks of 32 columns, 4 pieces of 64 k-groups each.
        assert_eq!(down.gemv_grid(GemvTile::SINGLE_LINEAR), (128, 1));
        assert_eq!(GemvTile::SINGLE_LINEAR.threads(1), 256);
        // The pair: one wave of 112 blocks of 512 threads at N = 7168.
        let pair = SkinnyMatmul {
            weights: 2,
            ..linear(4096, 7168)
        };
        assert_eq!(pair.gemv_grid(GemvTile::PAIR_LINEAR), (112, 1));
        assert_eq!(GemvTile::PAIR_LINEAR.threads(2), 512);
        // The lone matmul prefetches its first steps before the wait, the
        // pair (with its prologue, first in a call) nothing; the CUDA-core
        // GEMV only where its k-groups make whole lines of a row.
        assert_eq!(down.gemv_prefetch(GemvTile::SINGLE_LINEAR), 8);
        assert_eq!(down.gemv_prefetch(GemvTile::SINGLE_MMA_LINEAR), 4);
        assert_eq!(pair.gemv_prefetch(GemvTile::PAIR_MMA_LINEAR), 0);
        assert_eq!(pair.gemv_prefetch(GemvTile::PAIR_LINEAR), 0);
        // Launched early behind an all-reduce, the one-row pair prefetches
        // too; its 16-row tensor-core GEMV, which that launch never takes,
        // does not.
        let early_pair = SkinnyMatmul {
            launched_early: 1,
            ..pair.clone()
        };
        assert_eq!(early_pair.gemv_prefetch(GemvTile::PAIR_LINEAR), 4);
        assert_eq!(early_pair.gemv_prefetch(GemvTile::PAIR_MMA_LINEAR), 0);
        let ragged_groups = GemvTile {
            k_groups: 36,
            ..GemvTile::SINGLE_LINEAR
        };
        assert_eq!(down.gemv_prefetch(ragged_groups), 0);
        let not_early = SkinnyMatmul {
            grid_dependency: false,
            ..down.clone()
        };
        assert_eq!(not_early.gemv_prefetch(GemvTile::SINGLE_LINEAR), 0);
        // The register-streaming tensor-core GEMV reads them too (its own
        // loop: `gemv_mma_linear`), the TMA's and wgmma's do not.
        assert_eq!(down.gemv_problem(GemvTile::SINGLE_MMA_LINEAR), None);
        let tma = linear(2048, 4096)
            .gemv_problem(GemvTile::SINGLE_TMA)
            .unwrap();
        assert!(
            tma.contains("only the CUDA-core and the register-streaming"),
            "{tma}"
        );
        // Its norm is staged, never streamed: a pair with the RMSNorm
        // prologue whose rows would stream is refused, so `norm_must_stream`
        // never turns streaming on for it.
        let streamed = SkinnyMatmul {
            weight_transposed: true,
            stream_norm: true,
            ..matmul(16384, 7168, 16384, true)
        };
        assert!(streamed.gemv_shape().streamed);
        assert!(
            streamed
                .gemv_problem(GemvTile::PAIR_MMA_LINEAR)
                .unwrap()
                .contains("stages its rows")
        );
        let pair_norm = SkinnyMatmul {
            stream_norm: false,
            ..streamed
        };
        assert!(!pair_norm.norm_must_stream(GemvTile::PAIR_MMA_LINEAR));
        // A warp's lanes are k-groups of one piece.
        let ragged = GemvTile {
            k_groups: 48,
            ..GemvTile::SINGLE_LINEAR
        };
        assert!(down.gemv_problem(ragged).unwrap().contains("whole warps"));
        // K in 16-byte pieces of a row; N anything (a column is a row).
        assert_eq!(linear(1000, 2063).problem(), None);
        assert!(
            linear(1004, 4096)
                .problem()
                .unwrap()
                .contains("multiple of 8")
        );
        assert!(matmul(1000, 4096, 1000, false).problem().is_some());
    }
}
