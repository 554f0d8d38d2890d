//! The GEMV on the tensor cores with its weight streamed by the TMA, for
//! single matmuls' calls of 2 to 16 rows on sm_90 and up: the same matmul
//! as `gemv_mma`, but the bytes in flight are held by the copy engine in
//! shared memory, not by registers. On one H200 the Llama-3-8B down
//! projection (two split-K slices of 3584 x 4096) takes 16.6-17.8 µs at 2
//! and 16 rows against 18.4-19.8 for `mma16`; the gate/up pair with its
//! RMSNorm prologue measured 5-7 µs slower than `mma16` and keeps it
//! (bench/results/2026-11-26-tma-gemv-h200.md).
//!
//! A block owns 64 columns of every weight (one TMA box row of 128 bytes)
//! over its split-K slice. It first stages its rows of `a` in shared
//! memory as bf16 (through the prologue where there is one), while the
//! first stages of the weight are in flight: read from global memory at
//! every step, they would put a trip to L2 on each step's critical path.
//! Its last warp is the producer: one lane issues, for each stage of
//! `stage_rows` weight rows, one `cp.async.bulk.tensor` box per weight into
//! a ring of `unroll` stages (128-byte swizzle), on the stage's `full`
//! mbarrier, after the consumers released it on its `empty` one. The other
//! warps consume: warp (k-group g, column group c) takes the 16-row steps
//! g, g + k_groups, ... of each stage and the 16 columns [16c, 16c + 16) of
//! each weight, reads the B fragments with `ldmatrix.trans` and multiplies
//! by `mma.sync` m16n8k16. Its `ldmatrix` lines are permuted within the
//! step so that lane (g, t) holds the weight's rows 4t .. 4t + 3 as the
//! fragment's k indices 2t, 2t + 1, 2t + 8, 2t + 9: the A fragment is then
//! the same four consecutive elements of a staged row as in `gemv_mma`.
//! The k-groups' sums meet in shared memory and every thread writes whole
//! output elements through the epilogue (`Gemv::write_out`).
//!
//! The weights' descriptors come from the runtime (`symm_mem.tensor_map`)
//! as extra kernel parameters; where it has none, the call takes `mma16`.

use super::gemv::{Engine, Gemv, GemvShape, GemvTile, Operands};
use super::kernel::{MMA_K, SkinnyMatmul, WARP};
use super::tensor_core::TensorCore;
use crate::collectives::emit::Emitter;
use crate::collectives::emit::Val;
use melior::dialect::arith::CmpiPredicate;

/// Columns of one weight per block: one box row of the swizzle (128 bytes).
pub const BOX_COLUMNS: u64 = 64;
/// Bytes of a box row: the 128-byte swizzle's row.
const BOX_ROW_BYTES: u64 = 128;
/// Column groups of consumer warps, and the columns each takes of a weight
/// (two `mma` n-blocks of 8).
const COLUMN_WARPS: u64 = 4;
const WARP_COLUMNS: u64 = BOX_COLUMNS / COLUMN_WARPS;
/// A swizzled stage starts on this boundary (the pattern repeats every 8
/// rows of 128 bytes).
pub(super) const STAGE_ALIGNMENT: u64 = 1024;
/// Bytes of an mbarrier.
pub(super) const BARRIER: u64 = 8;
/// Rows of an `ldmatrix` matrix, and the accumulators of one `mma`.
const LINES: u64 = 8;
const PER_MMA: u64 = 4;

/// Consumer warps of a TMA tiling (the producer is one more).
pub(super) fn consumer_warps(tile: &GemvTile) -> u64 {
    COLUMN_WARPS * tile.k_groups
}

/// Why a TMA tiling cannot run at any size (`None`: it can).
pub(super) fn tiling_problem(tile: &GemvTile) -> Option<String> {
    if tile.columns != BOX_COLUMNS {
        return Some(format!(
            "the TMA GEMV takes {BOX_COLUMNS} columns of each weight per block, not {}",
            tile.columns
        ));
    }
    if tile.rows != 8 && tile.rows != 16 {
        return Some(format!(
            "the TMA GEMV takes 8 or 16 rows, not {}",
            tile.rows
        ));
    }
    let steps = tile.stage_rows / MMA_K;
    if tile.stage_rows == 0
        || !tile.stage_rows.is_multiple_of(MMA_K)
        || tile.stage_rows > 256
        || !steps.is_multiple_of(tile.k_groups)
    {
        return Some(format!(
            "a TMA stage of {} rows: 16 to 256, whole 16-row steps for each of the {} k-groups",
            tile.stage_rows, tile.k_groups
        ));
    }
    if tile.unroll < 2 {
        return Some("the TMA ring needs at least 2 stages".into());
    }
    None
}

/// Why the TMA GEMV cannot run this matmul (`None`: it can).
pub(super) fn matmul_problem(k: &SkinnyMatmul, tile: GemvTile) -> Option<String> {
    if !k.grid_dependency {
        return Some("the TMA needs sm_90 or later (launch-dependents marks it)".into());
    }
    k.rows_vector_problem()
        .or_else(|| slices_problem(k, tile, "TMA"))
}

/// Why a GEMV whose weight the TMA streams in stages of `tile.stage_rows`
/// rows cannot take `k`'s split-K slices (`None`: it can): each slice must
/// be whole stages of one matrix of all the slices' rows, as one
/// descriptor describes them (`engine` names the GEMV).
pub(super) fn slices_problem(k: &SkinnyMatmul, tile: GemvTile, engine: &str) -> Option<String> {
    (k.slices > 1 && (k.w_slice != k.k * k.n || !k.k.is_multiple_of(tile.stage_rows))).then(|| {
        format!(
            "split-K slices that are not whole {engine} stages of one matrix of rows (K = {})",
            k.k
        )
    })
}

/// Where a TMA GEMV's shared memory goes, in bytes from the dynamic
/// shared memory's start: the staged rows of `a` (bf16, through the
/// prologue where there is one) from 0,
/// the ring after them (plus a stage alignment's slack: the ring starts on
/// the next 1024-byte boundary of the address), the mbarriers (full, then
/// empty), and `end`, where the row statistics go. The k-groups' sums take
/// the place of the rows and the ring once the loop is done.
pub(super) struct RingLayout {
    pub ring: u64,
    pub stage: u64,
    pub barriers: u64,
    pub end: u64,
}

impl RingLayout {
    pub fn of(tile: &GemvTile, shape: &GemvShape) -> Self {
        // The rows are staged with or without a prologue.
        let rows = tile.rows * GemvTile::staged_row_stride(shape.k);
        let stage = shape.weights * tile.stage_rows * BOX_ROW_BYTES;
        let barriers = rows + tile.unroll * stage + STAGE_ALIGNMENT;
        RingLayout {
            ring: rows,
            stage,
            barriers,
            end: barriers + 2 * tile.unroll * BARRIER,
        }
    }
}

/// A ring of shared-memory stages that the TMA fills, on the first
/// 1024-byte boundary (the swizzle's) at or after its place, with a `full`
/// and an `empty` mbarrier per stage: what the TMA GEMV and the wgmma GEMV
/// both stream through.
pub(super) struct Ring<'c> {
    ring: Val<'c>,
    barriers: Val<'c>,
    stages: u64,
    stage: u64,
}

impl<'c> Ring<'c> {
    /// The ring of `stages` stages of `stage` bytes from byte `at` of the
    /// dynamic shared memory (rounded up to 1024), its barriers at byte
    /// `barriers` (full, then empty). Thread 0 initializes them, the full
    /// ones for `arrivals.0` arrivals and the empty ones for `arrivals.1`;
    /// the block meets after.
    pub(super) fn new(
        e: &Emitter<'c>,
        (at, stage, stages): (u64, u64, u64),
        barriers: u64,
        arrivals: (i64, i64),
    ) -> Self {
        let c = |v: u64| e.c64(v as i64);
        let shared = e.dynamic_shared();
        let base = e.ptr_to_int(shared, e.i64());
        let start = e.add(base, c(at + STAGE_ALIGNMENT - 1));
        let aligned = e.and(start, e.c64(-(STAGE_ALIGNMENT as i64)));
        let ring = Ring {
            ring: e.byte_offset(shared, e.sub(aligned, base)),
            barriers: e.byte_offset(shared, c(barriers)),
            stages,
            stage,
        };
        let first = e.cmp(CmpiPredicate::Eq, e.cast(e.thread_id(), e.i64()), c(0));
        e.when(first, |e| {
            for s in 0..stages {
                e.mbarrier_init(ring.full(e, c(s)), arrivals.0);
                e.mbarrier_init(ring.empty(e, c(s)), arrivals.1);
            }
            e.fence_mbarrier_init();
        });
        e.sync_threads();
        ring
    }

    /// Stage `s`'s `full` mbarrier (the TMA completes on it).
    pub(super) fn full(&self, e: &Emitter<'c>, s: Val<'c>) -> Val<'c> {
        e.byte_offset(self.barriers, e.mul(s, e.c64(BARRIER as i64)))
    }

    /// Stage `s`'s `empty` mbarrier (the consumers release it on it).
    pub(super) fn empty(&self, e: &Emitter<'c>, s: Val<'c>) -> Val<'c> {
        let at = e.add(s, e.c64(self.stages as i64));
        e.byte_offset(self.barriers, e.mul(at, e.c64(BARRIER as i64)))
    }

    /// Stage `s`'s first byte.
    pub(super) fn stage(&self, e: &Emitter<'c>, s: Val<'c>) -> Val<'c> {
        e.byte_offset(self.ring, e.mul(s, e.c64(self.stage as i64)))
    }
}

impl<'c> Gemv<'_, 'c> {
    pub(super) fn emit_tma(&self) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        debug_assert_eq!(tile.engine, Engine::Tma);
        let i64 = e.i64();
        let i32 = TensorCore::i32(e);
        let shape = k.gemv_shape();
        let layout = RingLayout::of(&tile, &shape);
        let consumers = consumer_warps(&tile);
        let stages = tile.unroll;
        let steps_per_stage = tile.stage_rows / MMA_K;
        let tid = e.cast(e.thread_id(), i64);
        let warp = e.div(tid, self.c(WARP));
        let lane = e.rem(tid, self.c(WARP));
        let Operands { m, a, out, weights } = self.operands();
        // The descriptors follow the other GEMVs' parameters.
        let first_descriptor = k.parameters(e).len();
        let descriptors: Vec<Val<'c>> = (0..k.weights as usize)
            .map(|j| e.int_to_ptr(e.arg(first_descriptor + j)))
            .collect();
        // The lines of the first `prefetch` weight rows of the block's
        // columns towards L2, before the wait for the grids before.
        // Launched early, the kernel starts its stream while the grid
        // before it drains, as the register GEMVs do.
        let column_start = e.mul(e.cast(e.block_id(), i64), self.c(BOX_COLUMNS));
        self.prefetch_rows(e, &weights, tid, column_start);
        let shared = e.dynamic_shared();
        let statistics = e.byte_offset(shared, self.c(tile.statistics_offset(&shape)));
        let ring = Ring::new(
            e,
            (layout.ring, layout.stage, stages),
            layout.barriers,
            (1, consumers as i64),
        );

        // Stage `it` of the block's slice: each weight's box of rows
        // [slice K + it x stage_rows, ...) at the block's columns.
        let slice = e.cast(e.block_id_y(), i64);
        let first_row = e.mul(slice, self.c(k.k));
        let iterations = k.k.div_ceil(tile.stage_rows);
        let weight_bytes = tile.stage_rows * BOX_ROW_BYTES;
        let issue = |e: &Emitter<'c>, it: Val<'c>| {
            let s = e.rem(it, self.c(stages));
            let stage = ring.stage(e, s);
            let bar = ring.full(e, s);
            e.mbarrier_arrive_expect_tx(bar, e.c32(layout.stage as i64));
            let row = e.add(first_row, e.mul(it, self.c(tile.stage_rows)));
            let at = (e.trunci(column_start, i32), e.trunci(row, i32));
            for (j, descriptor) in descriptors.iter().enumerate() {
                let dst = e.byte_offset(stage, self.c(j as u64 * weight_bytes));
                e.tma_load_2d(dst, *descriptor, at, bar);
            }
        };
        let producer = e.cmp(CmpiPredicate::Eq, warp, self.c(consumers));
        let leader = e.and(producer, e.cmp(CmpiPredicate::Eq, lane, self.c(0)));
        // The first stages are in flight while the rows of `a` are staged.
        e.when(leader, |e| {
            for descriptor in &descriptors {
                e.prefetch_tensormap(*descriptor);
            }
            for it in 0..stages.min(iterations) {
                issue(e, self.c(it));
            }
        });
        let group = e.div(lane, self.c(4));
        let quad = e.rem(lane, self.c(4));
        let rows = self.fragment_rows(m, a, group, shared, statistics);

        let accumulators = e.vector(2 * k.weights * PER_MMA, e.f32());
        let column_group = e.rem(warp, self.c(COLUMN_WARPS));
        let k_group = e.div(warp, self.c(COLUMN_WARPS));
        let sums = e.choose(
            producer,
            accumulators,
            |e| {
                e.when(e.cmp(CmpiPredicate::Eq, lane, self.c(0)), |e| {
                    e.for_range(
                        self.c(stages),
                        self.c(iterations.max(stages)),
                        self.c(1),
                        |e, it| {
                            let s = e.rem(it, self.c(stages));
                            let round = e.sub(e.div(it, self.c(stages)), self.c(1));
                            let parity = e.trunci(e.rem(round, self.c(2)), i32);
                            e.mbarrier_wait(ring.empty(e, s), parity);
                            issue(e, it);
                        },
                    );
                });
                e.zero(accumulators)
            },
            |e| {
                // Lane (g, t)'s line of the step's matrices: matrix l / 8
                // (k half, then n-block), line l % 8 holding the weight row
                // 4 (line / 2) + line % 2 (+ 2 in the second k half).
                let line = e.rem(lane, self.c(LINES));
                let matrix = e.div(lane, self.c(LINES));
                let row_in_step = e.add(
                    e.add(
                        e.mul(e.div(line, self.c(2)), self.c(4)),
                        e.rem(line, self.c(2)),
                    ),
                    e.mul(e.rem(matrix, self.c(2)), self.c(2)),
                );
                let chunk = e.add(
                    e.mul(column_group, self.c(WARP_COLUMNS / LINES)),
                    e.div(matrix, self.c(2)),
                );
                // The 128-byte swizzle: 16-byte chunk c of row r sits at
                // chunk c ^ (r % 8) (a step is 16 rows: r % 8 is the line's).
                let swizzled = e.xor(chunk, e.rem(row_in_step, self.c(LINES)));
                let lane_offset = e.add(
                    e.mul(row_in_step, self.c(BOX_ROW_BYTES)),
                    e.mul(swizzled, self.c(16)),
                );
                let exact = k.k.is_multiple_of(tile.stage_rows);
                e.for_range_carrying(
                    self.c(0),
                    self.c(iterations),
                    self.c(1),
                    e.zero(accumulators),
                    |e, it, acc| {
                        let s = e.rem(it, self.c(stages));
                        let parity = e.trunci(e.rem(e.div(it, self.c(stages)), self.c(2)), i32);
                        e.mbarrier_wait(ring.full(e, s), parity);
                        let stage = ring.stage(e, s);
                        let mut acc = acc;
                        for j in 0..steps_per_stage / tile.k_groups {
                            let kk = e.add(k_group, self.c(j * tile.k_groups));
                            let step = e.add(e.mul(it, self.c(steps_per_stage)), kk);
                            let a_fragment = self.a_fragment(e, &rows, step, quad, exact);
                            let step_offset = e.mul(kk, self.c(MMA_K * BOX_ROW_BYTES));
                            for w in 0..k.weights {
                                let at = e
                                    .add(e.add(self.c(w * weight_bytes), step_offset), lane_offset);
                                let b = e.ldmatrix_x4_trans(e.byte_offset(stage, at));
                                for n_block in 0..2 {
                                    let first = (w * 2 + n_block) * PER_MMA;
                                    let c =
                                        std::array::from_fn(|q| e.extract(acc, first + q as u64));
                                    let pair =
                                        [b[2 * n_block as usize], b[2 * n_block as usize + 1]];
                                    let d = e.mma_bf16(a_fragment, pair, c);
                                    for (q, v) in d.into_iter().enumerate() {
                                        acc = e.insert(acc, v, first + q as u64);
                                    }
                                }
                            }
                        }
                        e.sync_warp();
                        e.when(e.cmp(CmpiPredicate::Eq, lane, self.c(0)), |e| {
                            e.mbarrier_arrive(ring.empty(e, s));
                        });
                        acc
                    },
                )
            },
        );
        // The sums where the rows and the ring were: every warp is past
        // its last read of both. Only then may the next grid launch (the
        // producer's idle lanes get here first).
        e.sync_threads();
        self.let_next_grid_launch();
        let consumer = e.cmp(CmpiPredicate::Ult, warp, self.c(consumers));
        e.when(consumer, |e| {
            for w in 0..k.weights {
                for n_block in 0..2 {
                    for q in 0..PER_MMA {
                        let row = e.add(group, self.c(8 * (q / 2)));
                        let column = e.add(
                            e.add(
                                self.c(w * BOX_COLUMNS + n_block * LINES + q % 2),
                                e.mul(column_group, self.c(WARP_COLUMNS)),
                            ),
                            e.mul(quad, self.c(2)),
                        );
                        let v = e.extract(sums, (w * 2 + n_block) * PER_MMA + q);
                        // Rows past the tiling's (8-row tilings) hold zeros.
                        let kept = e.cmp(CmpiPredicate::Ult, row, self.c(tile.rows));
                        e.when(kept, |e| {
                            e.store(v, self.sum_slot(e, shared, k_group, row, column), 4);
                        });
                    }
                }
            }
        });
        e.sync_threads();
        self.write_out(m, out, column_start, shared);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The permuted `ldmatrix` lines: lane (g, t) must receive the weight
    /// rows 4t, 4t + 1 (its b0) from matrices 0 and 2 and 4t + 2, 4t + 3
    /// (its b1) from matrices 1 and 3, as `.trans` hands thread t the
    /// elements of lines 2t and 2t + 1.
    #[test]
    fn permuted_lines_give_each_lane_its_four_rows() {
        let row_of = |lane: u64| {
            let (line, matrix) = (lane % LINES, lane / LINES);
            4 * (line / 2) + line % 2 + 2 * (matrix % 2)
        };
        for t in 0..4 {
            for matrix in 0..4 {
                let base = matrix * LINES;
                let rows = [row_of(base + 2 * t), row_of(base + 2 * t + 1)];
                let expected = if matrix % 2 == 0 {
                    [4 * t, 4 * t + 1]
                } else {
                    [4 * t + 2, 4 * t + 3]
                };
                assert_eq!(rows, expected, "t = {t}, matrix {matrix}");
            }
        }
        // Every row of the 16-row step is some line of each k half.
        let mut seen: Vec<u64> = (0..2 * LINES).map(row_of).collect();
        seen.sort();
        assert_eq!(seen, (0..16).collect::<Vec<_>>());
    }

    #[test]
    fn the_tma_tilings_fit_llama_shapes() {
        let (pair, down) = (GemvShape::LLAMA_PAIR, GemvShape::LLAMA_DOWN);
        // A pair can take it (the option's tiling), though it keeps mma16
        // by default.
        let pair_tile = GemvTile {
            stage_rows: 64,
            ..GemvTile::SINGLE_TMA
        };
        assert_eq!(pair_tile.problem(&pair), None);
        assert_eq!(GemvTile::SINGLE_TMA.problem(&down), None);
        assert_eq!(pair_tile.threads(2), 544);
        let layout = RingLayout::of(&pair_tile, &pair);
        // Four stages of both weights' 64-row boxes after the staged rows.
        assert_eq!(layout.stage, 2 * 64 * 128);
        assert!(layout.barriers >= layout.ring + 4 * layout.stage + STAGE_ALIGNMENT);
        assert!(pair_tile.shared_bytes(&pair) <= super::super::kernel::MAX_SHARED);
        // Unsplit, the down projection's K = 14336 rows of `a` do not fit.
        let whole = GemvShape { k: 14336, ..down };
        assert!(GemvTile::SINGLE_TMA.problem(&whole).is_some());
    }

    #[test]
    fn tma_tilings_that_cannot_run_are_refused() {
        let wide = GemvTile {
            columns: 128,
            ..GemvTile::SINGLE_TMA
        };
        assert!(tiling_problem(&wide).unwrap().contains("64 columns"));
        let uneven = GemvTile {
            stage_rows: 48,
            ..GemvTile::SINGLE_TMA
        };
        assert!(tiling_problem(&uneven).unwrap().contains("k-groups"));
        let one = GemvTile {
            unroll: 1,
            ..GemvTile::SINGLE_TMA
        };
        assert!(tiling_problem(&one).unwrap().contains("2 stages"));
    }

    proptest::proptest! {
        /// An accepted TMA tiling's regions fit its shared memory: the
        /// sums within the rows and the ring they replace, the barriers
        /// and statistics after the ring's slack.
        #[test]
        fn accepted_ring_layouts_fit(
            k_groups in 1u64..5,
            stages in 2u64..9,
            steps in 1u64..17,
            k_steps in 1u64..1100,
            weights in 1u64..3,
            staged in proptest::bool::ANY,
        ) {
            let tile = GemvTile {
                k_groups,
                unroll: stages,
                stage_rows: steps * k_groups * MMA_K,
                ..GemvTile::SINGLE_TMA
            };
            let shape = GemvShape { k: k_steps * MMA_K, weights, staged, streamed: false, column_bytes: 0 };
            if tile.problem(&shape).is_none() {
                let layout = RingLayout::of(&tile, &shape);
                let sums = tile.k_groups * tile.rows * weights * BOX_COLUMNS * 4;
                proptest::prop_assert!(sums <= layout.barriers);
                proptest::prop_assert!(layout.end <= tile.statistics_offset(&shape));
                proptest::prop_assert!(tile.shared_bytes(&shape) <= super::super::kernel::MAX_SHARED);
                proptest::prop_assert!(tile.threads(weights) <= 1024);
            }
        }
    }
}
