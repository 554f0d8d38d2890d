//! A GEMV's tiling (`GemvTile`): its engine, bands, k-groups and loads in
//! flight, the shared memory it lays out, and why it cannot run.

/// Elements of bf16 in a 16-byte piece.
pub(in crate::matmul) const PIECE: u64 = 8;
/// bf16 elements of a 128-byte line (what one L2 prefetch brings).
pub(in crate::matmul) const LINE_ELEMENTS: u64 = 64;
/// The most 16-byte vectors of a row of `a` a thread holds in registers
/// while the rows are prepared (`Gemv::rows_fit_registers`).
pub(super) const HELD_VECTORS: u64 = 4;
/// Columns of one warp of the tensor-core GEMV (8 pieces, one per lane
/// group of an `mma` fragment).
pub(in crate::matmul) const MMA_COLUMNS: u64 = 64;
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
/// graph all symm kernels and so replayed as launch lists)
/// (bench/results/2026-11-28-short-grid-wgmma-h200x2.md). The down
/// projection's 128 blocks (two slices) are not short: the MLP block
/// measured 0.5-1 µs slower with this ring there, but faster with the ring
/// filled before its wait (`GemvTile::AFTER_GEMV_WGMMA`).
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
    /// On the tensor cores, with a prologue that is a row factor times
    /// column factors (`Prologue::row_scale`) whose rows fit staged: the
    /// block stages the rows of `a` raw and applies the column factors to
    /// each fragment as it reads it from shared memory, summing the row
    /// statistics in its loop (each k-group's part kept after the
    /// statistics), rather than in a pass over the rows before its loop.
    pub norm_in_loop: bool,
    /// With the wgmma GEMV's ring: the producer fills the ring's first
    /// stages with weight before the kernel waits for the grid before it
    /// (`griddepcontrol.wait`, which the kernel then places itself), and
    /// only `a`'s boxes of those stages wait. Launched early behind a GEMV
    /// that writes none of the weight (`SkinnyMatmul::after_gemv_wgmma`),
    /// the weight streams into shared memory while that grid drains.
    pub fills_before_wait: bool,
    /// With `wgmma`: the accumulator sets a stage's steps take turns
    /// adding into (step s into set s mod `accumulators`), summed after the
    /// loop; 1 for the other engines. Two sets halve the chain of dependent
    /// `wgmma`s each stage adds to one set.
    pub accumulators: u64,
    /// With `wgmma`: the blocks of a thread-block cluster (side by side in
    /// the grid's column bands, one slice) that share the call's rows of
    /// `a`: each copies its share of a stage's pieces of `a` by TMA
    /// multicast into every block of the cluster, so L2 serves `a` once a
    /// cluster rather than once a block (`wgmma-gemv-cluster`); 1 (none)
    /// for the other engines.
    pub cluster: u64,
}

impl GemvTile {
    /// What the tilings below take unless they say otherwise: no TMA
    /// stages, rows of `a` staged only through a prologue, every call up to
    /// the kernel's rows, no L2 policy, nothing prefetched ahead in the
    /// loop, a norm applied before the loop. Not a tiling of its own (it
    /// has no sizes); each names its engine and sizes.
    const PLAIN: GemvTile = GemvTile {
        engine: Engine::CudaCores,
        columns: 0,
        k_groups: 0,
        unroll: 0,
        rows: 0,
        prefetch: 0,
        stage_rows: 0,
        stage_a: false,
        calls: 0,
        evict_first: false,
        ahead: 0,
        norm_in_loop: false,
        fills_before_wait: false,
        accumulators: 1,
        cluster: 1,
    };
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
        ..GemvTile::PLAIN
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
        ..GemvTile::PLAIN
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
        ..GemvTile::PLAIN
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
        ..GemvTile::PLAIN
    };
    pub const SINGLE_FEW: GemvTile = GemvTile {
        engine: Engine::CudaCores,
        columns: 64,
        k_groups: 64,
        unroll: 4,
        rows: 4,
        prefetch: 0,
        ..GemvTile::PLAIN
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
        ..GemvTile::PLAIN
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
        ..GemvTile::PLAIN
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
        ..GemvTile::PLAIN
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
        evict_first: true,
        ..GemvTile::PLAIN
    };

    /// The wgmma GEMV that single matmuls of a short grid take for calls
    /// of 2 to 16 rows (`SHORT_GRID_BLOCKS`, `wgmma-gemv-short`): 16 rows,
    /// a ring of 8 stages of 128 weight rows (16 KB each; 6 stages read
    /// TP 2's o_proj in 7.1-7.2 µs, 4 in 7.9, on one H200), its 8 steps a
    /// stage taking turns over 2 accumulator sets (so does the after-GEMV
    /// ring built on it). With one set the after-GEMV ring's Llama-3-8B
    /// down projection (a TP-2 rank's two slices alone, 3 weight copies,
    /// programmatic launch off) took 16.9 µs at 2 rows (median of 8
    /// rounds, 16.5-17.1) against 16.5 (16.2-16.8) with two, cuBLAS 16.3;
    /// at 16 rows 16.8 against 16.9, cuBLAS 16.7. The decoder half-layers,
    /// whose o_proj (and at TP 8's widths the down projection) take this
    /// short-grid ring, ran 0.1-0.3 µs faster at 2-8 rows and the same at
    /// 16. Four and eight sets were slower
    /// (bench/results/2026-11-29-down-tail-h200.md).
    pub const SHORT_WGMMA: GemvTile = GemvTile {
        rows: 16,
        calls: 16,
        unroll: 8,
        accumulators: 2,
        ..GemvTile::SINGLE_WGMMA
    };

    /// The wgmma GEMV that a single matmul on a full grid, launched early
    /// behind the GEMV whose output it reads, takes for calls of 2 to 16
    /// rows (`wgmma-gemv-after-gemv`, `SkinnyMatmul::after_gemv_wgmma`):
    /// the short grid's 8-stage ring, filled with weight before its wait
    /// (`fills_before_wait`). On one H200 (world size 1, 3 weight copies)
    /// the Llama-3-8B MLP block of a TP-2 rank took 0.2-0.7 µs less at 8-16
    /// rows with it than with `mma16_staged` (0.1-0.2 at 2), the decoder
    /// half-layer at TP 2's widths 0.3-0.7 µs less, and Llama-3-70B's
    /// MLP block at TP 2's widths 1.1-2.9 µs less; the same ring filled after the
    /// wait was 0.2-0.3 µs slower than `mma16_staged`. Rings of 6 and 10
    /// stages of 128 rows, 16 of 64 and 4 or 5 of 256 timed within 0.3 µs
    /// of it (bench/results/2026-11-29-ring-before-wait-h200.md).
    ///
    /// Its blocks run in clusters of 2 that share `a` (`cluster`). On one
    /// H200 (world size 1, 3 weight copies, in a CUDA graph, two rounds)
    /// that took the Llama-3-8B MLP block of a TP-2 rank from 46.7-46.8 to
    /// 45.9-46.0 µs at 2 rows, 47.2-47.4 to 46.7 at 8 and 48.3 to 47.9-48.0
    /// at 16 (the down projection 0.4-0.6 µs faster, the pair before it
    /// 0.6-1.0), and the decoder half-layer at TP 2's widths from 55.3 to
    /// 54.6-54.7 at 2 rows. The short-grid ring in clusters was 0.6-0.8 µs
    /// slower (TP 2's o_proj, 6.8 against 6.2 µs), so it keeps none
    /// (bench/results/2026-11-29-cluster-multicast-h200.md).
    pub const AFTER_GEMV_WGMMA: GemvTile = GemvTile {
        fills_before_wait: true,
        cluster: 2,
        ..GemvTile::SHORT_WGMMA
    };

    /// The cluster sizes a wgmma GEMV takes (`GemvTile::cluster`): powers
    /// of two within the portable cluster of 8, at most the 64-element
    /// pieces of `a` a stage has (2 for stages of 128 rows, 4 for 256),
    /// which the blocks split evenly (`gemv_wgmma::tiling_problem`).
    pub const CLUSTERS: [u64; 3] = [1, 2, 4];

    /// The 8-row kernel of a 16-row wgmma ring (`wgmma-gemv-eight-rows`):
    /// the same ring for calls of up to 8 rows, each step one m64n8k16
    /// (half the multiplies of m64n16k16) on `a`'s boxes of 8 rows. On one
    /// H200 (world size 1, 3 weight copies) the Llama-3-8B down projection
    /// of a TP-2 rank alone (programmatic launch off, medians of 6 rounds)
    /// took 16.3, 16.5 and 16.4 µs at 2, 4 and 8 rows against the 16-row
    /// kernel's 16.8, 16.7 and 17.0 (cuBLAS, whose own kernel there is
    /// 64x8: 16.1, 16.2, 16.3); the decoder half-layers 0.35-0.8 µs less
    /// at 2-8 rows at TP 2's and TP 8's widths, the MLP block 0.5 µs less
    /// at 2 rows and within 0.15 at 4 and 8
    /// (bench/results/2026-11-29-eight-row-wgmma-h200.md).
    pub fn eight_row_kernel(&self) -> GemvTile {
        GemvTile {
            rows: 8,
            calls: 8,
            ..*self
        }
    }

    /// What a remark says of the GEMV's cluster (`cluster`), if it has one.
    pub fn cluster_note(&self) -> String {
        match self.cluster {
            1 => String::new(),
            cluster => format!(" in clusters of {cluster} sharing `a`"),
        }
    }

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
    pub(in crate::matmul) fn warp_columns(&self) -> u64 {
        if self.columns.is_multiple_of(MMA_COLUMNS) {
            MMA_COLUMNS
        } else {
            MMA_COLUMNS / 2
        }
    }
    pub(super) fn pieces(&self, weights: u64) -> u64 {
        weights * self.columns / PIECE
    }
    pub fn threads(&self, weights: u64) -> u64 {
        match self.engine {
            Engine::CudaCores => self.pieces(weights) * self.k_groups,
            Engine::TensorCores => {
                weights
                    * (self.columns / self.warp_columns())
                    * self.k_groups
                    * crate::matmul::kernel::WARP
            }
            Engine::Tma => {
                (crate::matmul::gemv_tma::consumer_warps(self) + 1) * crate::matmul::kernel::WARP
            }
            Engine::Wgmma => crate::matmul::gemv_wgmma::threads(),
        }
    }
    /// Bytes between two rows of `a` that the tensor-core GEMV stages in
    /// shared memory (bf16 rows of K, a multiple of 16, padded to 128
    /// bytes and then by 32, so that the eight rows of a fragment's loads
    /// fall in different banks).
    pub(in crate::matmul) fn staged_row_stride(k: u64) -> u64 {
        (k * 2).next_multiple_of(128) + 32
    }
    /// Shared memory: on the CUDA cores the rows of `a` (f32), then the
    /// k-groups' sums (f32), then the row statistics (f32). On the tensor
    /// cores the sums start at 0: with a prologue they take the place of
    /// the rows of `a` (bf16, normalized once by the block) once the loop
    /// is done; without one `a` is read from global memory. Where the
    /// sums start:
    pub(in crate::matmul) fn sums_offset(&self, shape: &GemvShape) -> u64 {
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
            Engine::TensorCores => self.threads(weights) * crate::matmul::gemv_mma::LANE_WORDS * 4,
        }
    }
    /// Where the row statistics start.
    pub(in crate::matmul) fn statistics_offset(&self, shape: &GemvShape) -> u64 {
        let sums_end = self.sums_offset(shape) + self.sums_bytes(shape.weights);
        match self.engine {
            Engine::TensorCores if (shape.staged && !shape.streamed) || self.stage_a => {
                sums_end.max(self.rows * Self::staged_row_stride(shape.k))
            }
            Engine::Tma => crate::matmul::gemv_tma::RingLayout::of(self, shape)
                .end
                .max(sums_end),
            Engine::Wgmma => crate::matmul::gemv_wgmma::RingLayout::of(self, shape)
                .end
                .max(sums_end),
            _ => sums_end,
        }
    }
    /// Where the tensor-core GEMV that applies the norm as it reads `a`
    /// (`GemvShape::streamed`) keeps each k-group's part of each row's
    /// statistic (f32, k-group by k-group): after the statistics.
    pub(in crate::matmul) fn statistic_parts_offset(&self, shape: &GemvShape) -> u64 {
        self.statistics_offset(shape) + self.rows * 4
    }
    fn statistic_parts_bytes(&self, shape: &GemvShape) -> u64 {
        if self.engine == Engine::TensorCores && (shape.streamed || self.norm_in_loop) {
            self.k_groups * self.rows * 4
        } else {
            0
        }
    }
    /// Where the GEMVs that apply their norm in their loop (the
    /// `_norm_in_loop` twin, and the one that streams its norm) keep the
    /// prologue's column operands (the norm weight), each K elements, one
    /// after the other: after the statistics' parts, on a 16-byte boundary.
    pub(in crate::matmul) fn column_operands_offset(&self, shape: &GemvShape) -> u64 {
        (self.statistic_parts_offset(shape) + self.statistic_parts_bytes(shape))
            .next_multiple_of(16)
    }
    fn column_operands_bytes(&self, shape: &GemvShape) -> u64 {
        if self.stages_column_operands(shape) {
            shape.k * shape.column_bytes
        } else {
            0
        }
    }
    /// Whether the tiling stages the prologue's column operands: the twin
    /// that applies its norm in its loop, and the GEMV that streams it,
    /// read four of their elements a step, and from shared memory their
    /// loop waits on no global load but the weight's (and the streamed
    /// rows'). On one H200 the Llama-3-8B pair at 16 rows took 30.0-30.3 µs
    /// instead of 31.3-31.5 (bench/results/2026-11-29-stage-columns-h200.md);
    /// streaming its norm, Llama-3-70B's TP-8 pair (8192/3584) 44.9-45.0
    /// instead of 47.9 at 2 rows (bench/results/2026-11-29-stage-few-h200.md).
    pub(in crate::matmul) fn stages_column_operands(&self, shape: &GemvShape) -> bool {
        self.engine == Engine::TensorCores && shape.staged && (shape.streamed || self.norm_in_loop)
    }
    /// The shared memory a block takes.
    pub fn shared_bytes(&self, shape: &GemvShape) -> u64 {
        self.column_operands_offset(shape) + self.column_operands_bytes(shape)
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
        if self.engine != Engine::Wgmma && self.accumulators != 1 {
            return Some(format!(
                "{} accumulator sets: only the wgmma GEMV takes more than one",
                self.accumulators
            ));
        }
        if self.engine != Engine::Wgmma && self.cluster != 1 {
            return Some(format!(
                "clusters of {} blocks: only the wgmma GEMV shares `a` in clusters",
                self.cluster
            ));
        }
        if self.engine == Engine::Tma {
            if let Some(problem) = crate::matmul::gemv_tma::tiling_problem(self) {
                return Some(problem);
            }
        } else if self.engine == Engine::Wgmma {
            if let Some(problem) = crate::matmul::gemv_wgmma::tiling_problem(self) {
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
        if self.shared_bytes(shape) > crate::matmul::kernel::MAX_SHARED {
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
    /// Bytes of one column of the prologue's column operands together
    /// (the RMSNorm's weight: 2), which the GEMVs that apply the norm in
    /// their loop stage (`GemvTile::stages_column_operands`).
    pub column_bytes: u64,
}

#[cfg(test)]
impl GemvShape {
    /// A TP-2 rank's Llama-3-8B gate/up pair (with its RMSNorm prologue)
    /// and down projection slice, for the tilings' tests.
    pub(in crate::matmul) const LLAMA_PAIR: GemvShape = GemvShape {
        k: 4096,
        weights: 2,
        staged: true,
        streamed: false,
        column_bytes: 2,
    };
    pub(in crate::matmul) const LLAMA_DOWN: GemvShape = GemvShape {
        k: 3584,
        weights: 1,
        staged: false,
        streamed: false,
        column_bytes: 0,
    };
}
