//! The GEMV on the tensor cores, for calls of 2 to 16 rows: the same
//! matmul as the CUDA-core GEMV (`gemv`), and the same way through memory
//! (each lane streams 16-byte pieces of the weight straight into its
//! registers, `ld.global.L1::no_allocate`, never through shared memory),
//! but the products come from `mma.sync` m16n8k16, so sixteen rows cost
//! little more than two (on one H200, the Llama-3-8B pair with its norm
//! and SiLU fused: 33.2 µs at 2 rows, 35.1 at 16). On the CUDA cores each
//! row of `a` costs eight FMAs per weight element loaded; past a few rows
//! those, not the bytes, set the time.
//!
//! A warp owns 64 columns of one weight (a column tile) and every
//! `k_groups`-th 16-row step of its slice's K range. In a step, lane
//! `(g, t)` (`g = lane / 4`, `t = lane % 4`) loads the piece of columns
//! [8g, 8g + 8) of the rows 4t, 4t + 1, 4t + 2 and 4t + 3: the warp reads
//! sixteen whole rows of 128 bytes. The `mma`'s K order is free as long as
//! both operands agree, so the lane's four rows are the fragment's k
//! indices 2t, 2t + 1, 2t + 8 and 2t + 9; and its eight columns are column
//! g of eight `mma`s, the i-th taking column 8g + i. The weight thus needs
//! no shuffle between lanes: each B register packs two of the lane's rows
//! at one column. The A fragment (rows g and g + 8 of `a`, the same four
//! k) is one 8-byte load per row from shared memory, where the block keeps
//! `a` as bf16 after the fused prologue (its row statistics reduced one
//! warp per row), zero past K and past the call's rows. Where the prologue
//! is a row factor times column factors (`row_scale`: RMSNorm), the block
//! stages only the column factors, in the statistic's pass, and the row
//! factor multiplies each row's sums after the loop.
//!
//! For calls of 9 to 16 rows the GEMV takes a twin (`_norm_in_loop`,
//! `GemvTile::norm_in_loop`) that stages the rows raw, in one round of
//! 16-byte loads, with the norm weight beside them, and applies such a
//! prologue in its loop: each step's words of the lane's rows times the
//! norm weight's four elements, both read from shared memory, and each
//! element a step of its row's statistic, whose parts meet after the loop
//! as where the norm streams (below). The pass before the loop issues its
//! loads in two or three rounds (ptxas keeps half of a warp's 32 in
//! flight), so at 16 rows it cost the Llama-3-8B block 0.4-1.0 µs more on
//! one H200 (bench/results/2026-11-29-norm-in-loop-h200.md); read from
//! global memory a step, the norm weight cost the twin another 1.2 µs.
//! Where the grid is full the twin takes calls of 2 to 8 rows too
//! (`SkinnyMatmul::twin_takes_few_rows`: 1.7-1.9 µs less at Llama-3-8B's
//! TP-2 widths), and those of one row, in place of the CUDA-core GEMV
//! (0.2-0.3 µs less there); elsewhere those keep the pass, which skips the
//! rows a call does not have (bench/results/2026-11-29-stage-columns-h200.md).
//!
//! Where 16 staged rows of a long K do not fit in shared memory
//! (`SkinnyMatmul::norm_must_stream`), the kernel stages no rows and
//! applies an RMSNorm-style prologue as it reads `a`: each lane's four
//! elements of its rows come from global memory with the step's weight,
//! times the norm weight's elements, and sum into its part of the rows'
//! statistics, which the k-groups add up after the loop. Where the rows
//! fit, staging them measured faster. The norm weight (K elements) it does
//! stage, while its first steps are in flight, and its loop reads it from
//! shared memory as the twin's does: on one H200 the pair of Llama-3-70B's
//! TP-8 shard (8192/3584) took 44.9-45.0 instead of 47.9 µs at 2 rows and
//! 53.1 instead of 54.9-55.1 at 16, although ptxas spills 12 bytes of it
//! (bench/results/2026-11-29-stage-few-h200.md).
//!
//! After the loop the warps' accumulators meet in the shared memory the
//! rows of `a` took, and each thread writes whole output elements through
//! the epilogue, as in `gemv`.

use super::gemv::{Gemv, GemvTile, MMA_COLUMNS, Operands, PIECE, row_piece};
use super::kernel::{MMA_K, Prologue, RowScaleFunctions, WARP};
use super::tensor_core::TensorCore;
use crate::collectives::emit::Emitter;
use crate::collectives::emit::Val;
use crate::ir::scalar::Scalar;
use melior::dialect::arith::CmpiPredicate;

/// Weight rows a lane loads per 16-row step (its four k of the fragment),
/// and the lanes that share a piece's columns.
pub(super) const ROWS_PER_LANE: u64 = 4;
/// `mma`s per step: one per column of a lane's piece.
const MMAS: u64 = PIECE;
/// f32 accumulators of one `mma` per lane.
pub(super) const PER_MMA: u64 = 4;
/// Rows of one `mma` half (the A fragment's rows g and g + 8).
pub(super) const HALF: u64 = 8;
/// The most pieces of `a` a thread loads at once while the rows are
/// prepared: each round of loads is a trip to memory while the weight's
/// stream waits, so a row takes as few rounds as these registers allow.
const MAX_BATCH: u64 = 16;
/// Words of the sums a lane takes: its 32 accumulators, padded so that
/// the 16-byte stores of eight lanes fall in different banks.
pub(super) const LANE_WORDS: u64 = MMAS * PER_MMA + 4;

/// What a tensor-core GEMV's lane works on: its lane in the warp, the
/// lane's group g and quad t of the `mma` fragments, the warp's column tile
/// (of `GemvTile::warp_columns`, the second weight's after the first's) and
/// k-group, the block's first column `n0`, the tile's first column within
/// the block's and the lane's group's first column within its weight
/// (`column`), the call's rows `m`, `a` and `out` at the block's
/// slice, the tile's weight, and the shared memory and its row statistics.
pub(super) struct MmaLane<'c> {
    pub lane: Val<'c>,
    pub group: Val<'c>,
    pub quad: Val<'c>,
    pub column_tile: Val<'c>,
    pub k_group: Val<'c>,
    pub n0: Val<'c>,
    pub tile_start: Val<'c>,
    pub column: Val<'c>,
    pub m: Val<'c>,
    pub a: Val<'c>,
    pub out: Val<'c>,
    pub weight: Val<'c>,
    pub shared: Val<'c>,
    pub statistics: Val<'c>,
}

impl<'c> Gemv<'_, 'c> {
    /// This thread's `MmaLane`: warp w is column tile `w % tiles` of
    /// k-group `w / tiles`, and lane group g's first column is
    /// `g * group_columns` into the tile.
    pub(super) fn mma_lane(&self, group_columns: u64) -> MmaLane<'c> {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let i64 = e.i64();
        let tid = e.cast(e.thread_id(), i64);
        let warp = e.div(tid, self.c(WARP));
        let lane = e.rem(tid, self.c(WARP));
        let group = e.div(lane, self.c(ROWS_PER_LANE));
        let quad = e.rem(lane, self.c(ROWS_PER_LANE));
        let warp_columns = tile.warp_columns();
        let per_weight = tile.columns / warp_columns;
        let tiles = k.weights * per_weight;
        let column_tile = e.rem(warp, self.c(tiles));
        let k_group = e.div(warp, self.c(tiles));
        let which = e.div(column_tile, self.c(per_weight));
        let n0 = e.mul(e.cast(e.block_id(), i64), self.c(tile.columns));
        let tile_start = e.mul(e.rem(column_tile, self.c(per_weight)), self.c(warp_columns));
        let group_column = match group_columns {
            1 => group,
            columns => e.mul(group, self.c(columns)),
        };
        let column = e.add(e.add(n0, tile_start), group_column);
        let Operands { m, a, out, weights } = self.operands();
        let weight = self.weight_of(&weights, which);
        let shared = e.dynamic_shared();
        let statistics = e.byte_offset(shared, self.c(tile.statistics_offset(&k.gemv_shape())));
        MmaLane {
            lane,
            group,
            quad,
            column_tile,
            k_group,
            n0,
            tile_start,
            column,
            m,
            a,
            out,
            weight,
            shared,
            statistics,
        }
    }

    pub(super) fn emit_mma(&self) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let MmaLane {
            lane,
            group,
            quad,
            column_tile,
            k_group,
            n0,
            tile_start,
            column,
            m,
            a,
            out,
            weight,
            shared,
            statistics,
        } = self.mma_lane(PIECE);

        // Step i of this warp is i * k_groups + k_group (K is a multiple
        // of 16: `SkinnyMatmul::problem`).
        let steps = k.k / MMA_K;
        let per_warp = steps.div_ceil(tile.k_groups);
        let iterations = per_warp.div_ceil(tile.unroll);
        let exact = k.k.is_multiple_of(MMA_K * tile.k_groups * tile.unroll)
            && k.n.is_multiple_of(tile.columns);
        let step_of = |e: &Emitter<'c>, i: Val<'c>| e.add(e.mul(i, self.c(tile.k_groups)), k_group);
        // The lane's piece of row `r` of `step` (zero past K and N).
        let load_piece = |e: &Emitter<'c>, step: Val<'c>, r: u64| -> Val<'c> {
            let row = e.add(
                e.mul(step, self.c(MMA_K)),
                e.add(e.mul(quad, self.c(ROWS_PER_LANE)), self.c(r)),
            );
            self.weight_piece(e, weight, (row, column), exact)
        };
        // Where the kernel applies its norm as it reads `a`, the rows'
        // words are loaded with the weight, a step ahead of their `mma`s, so
        // that the norm's work waits on no load (on one H200 the Llama-3-8B
        // pair gains 0.7-1.0 µs; the down projection, whose fragments are
        // read raw, loses 0.2-0.4 µs that way and reads them at its step:
        // bench/results/2026-11-27-stream-norm-h200.md).
        // With it the loop also carries the lane's parts of its rows'
        // statistics, one per row (g, and g + 8 for 16 rows), as many as
        // the words of `a` a step carries.
        let streamed = self.streams_norm();
        let in_loop = self.norm_in_loop();
        let sums_statistics = self.sums_statistics_in_loop();
        let parts = if sums_statistics { self.halves() } else { 0 };
        let unstaged = streamed.then(|| self.fragment_rows(m, a, group, shared, statistics));
        // The words of `a` a step carries: the streamed norm's, read with
        // the weight.
        let per_step = ROWS_PER_LANE as usize + if streamed { parts } else { 0 };
        let load_step = |e: &Emitter<'c>, i: Val<'c>| -> Vec<Val<'c>> {
            let step = step_of(e, i);
            let mut loaded: Vec<Val<'c>> =
                (0..ROWS_PER_LANE).map(|r| load_piece(e, step, r)).collect();
            if let Some(rows) = &unstaged {
                let (at, inside) = self.fragment_column(e, step, quad, exact);
                // (With an exact tiling the steps one iteration past the
                // last are inside nothing; their words are never used.)
                let at = e.min(at, self.c(k.k - ROWS_PER_LANE));
                loaded.extend(rows.iter().map(|row| row.words(self, e, at, inside)));
            }
            loaded
        };
        // A step's lines towards L2 (no value depends on them): lane l
        // takes row l % 16 of this warp's step `i + l / 16` (the rows past
        // K clamped to the last), so a call covers two steps.
        let line = e.rem(lane, self.c(MMA_K));
        let half = e.div(lane, self.c(MMA_K));
        let first_column = e.min(e.add(n0, tile_start), self.c(k.n.saturating_sub(PIECE)));
        let prefetch_steps = |e: &Emitter<'c>, i: Val<'c>| {
            let step = step_of(e, e.add(i, half));
            let row = e.min(e.add(e.mul(step, self.c(MMA_K)), line), self.c(k.k - 1));
            self.prefetch_weight(e, weight, row, first_column);
        };
        // The first `prefetch` steps, before the wait for the grids before.
        for j in 0..self.prefetch().div_ceil(2) {
            prefetch_steps(e, self.c(2 * j));
        }
        // The accumulators, the statistics' parts, then the first steps,
        // in flight while the rows of `a` are staged.
        let mut inits = vec![e.zero(e.vector(MMAS * PER_MMA, e.f32()))];
        inits.extend((0..parts).map(|_| e.cf32(0.0)));
        for u in 0..tile.unroll {
            inits.extend(load_step(e, self.c(u)));
        }
        // Where the norm streams, its column operands go to shared memory
        // while the first steps are in flight (the twin stages them with
        // its rows), before the loop's first read of them.
        if streamed {
            let columns = self.load_column_operands(e);
            if !columns.is_empty() {
                self.store_column_operands(e, columns);
                e.sync_threads();
            }
        }
        let rows = match &unstaged {
            Some(rows) => rows.clone(),
            None => self.fragment_rows(m, a, group, shared, statistics),
        };
        let carried = e.for_range_carrying_many(
            (self.c(0), self.c(iterations), self.c(1)),
            &inits,
            |e, iteration, carried| {
                let mut acc = carried[0];
                let mut statistic_parts = carried[1..1 + parts].to_vec();
                let mut next = Vec::with_capacity(tile.unroll as usize * per_step);
                for u in 0..tile.unroll as usize {
                    let i = e.add(e.mul(iteration, self.c(tile.unroll)), self.c(u as u64));
                    let first = 1 + parts + u * per_step;
                    let pieces = &carried[first..first + ROWS_PER_LANE as usize];
                    let words = &carried[first + ROWS_PER_LANE as usize..first + per_step];
                    next.extend(load_step(e, e.add(i, self.c(tile.unroll))));
                    // `ahead` steps past those the loads keep in flight,
                    // two steps a call (an odd unroll prefetches some twice).
                    if tile.ahead > 0 && u % 2 == 0 {
                        prefetch_steps(e, e.add(i, self.c(tile.unroll + tile.ahead)));
                    }
                    let step = step_of(e, i);
                    let a_fragment = if streamed {
                        self.normed_a_fragment(e, words, step, quad, exact, &mut statistic_parts)
                    } else if in_loop {
                        let staged = self.fragment_words(e, &rows, step, quad, exact);
                        self.normed_a_fragment(e, &staged, step, quad, exact, &mut statistic_parts)
                    } else {
                        self.a_fragment(e, &rows, step, quad, exact)
                    };
                    for j in 0..MMAS {
                        let w = |r: usize| e.extract(pieces[r], j);
                        let b = [e.pack(w(0), w(1)), e.pack(w(2), w(3))];
                        let c = std::array::from_fn(|q| e.extract(acc, j * PER_MMA + q as u64));
                        let d = e.mma_bf16(a_fragment, b, c);
                        for (q, v) in d.into_iter().enumerate() {
                            acc = e.insert(acc, v, j * PER_MMA + q as u64);
                        }
                    }
                }
                let mut out = vec![acc];
                out.extend(statistic_parts);
                out.extend(next);
                out
            },
        );
        if sums_statistics {
            self.store_statistic_parts(&carried[1..1 + parts], (k_group, column_tile), lane);
        }

        self.mma_finish(carried[0], (m, out, n0), (k_group, column_tile, lane));
    }

    /// After a tensor-core GEMV's loop: the next grid may launch, each
    /// lane's accumulators `acc` go to a row of their own in shared memory
    /// (`lane_sums`; where the staged rows of `a` were, once every warp is
    /// done with them), and the block writes its output through the
    /// epilogue (`write_out`, which finds each sum with `mma_sum_slot`).
    pub(super) fn mma_finish(
        &self,
        acc: Val<'c>,
        (m, out, n0): (Val<'c>, Val<'c>, Val<'c>),
        (k_group, column_tile, lane): (Val<'c>, Val<'c>, Val<'c>),
    ) {
        let e = self.e;
        self.let_next_grid_launch();
        if self.stages_rows() {
            e.sync_threads();
        }
        let shared = e.dynamic_shared();
        let lane_sums = self.lane_sums(e, shared, k_group, column_tile, lane);
        e.store(acc, lane_sums, 16);
        e.sync_threads();
        self.write_out(m, out, n0, shared);
    }

    /// The A fragment of 16-row step `step` for the lanes of quad `quad`:
    /// four consecutive elements of the lane's rows (g, and g + 8 for 16
    /// rows) at 16 step + 4 quad, as the `mma`'s a0..a3 (the K order of a
    /// lane's four weight rows 4t .. 4t + 3). Unless `exact`, a step past K
    /// reads as 0, from the row's last columns.
    pub(super) fn a_fragment(
        &self,
        e: &Emitter<'c>,
        rows: &[FragmentRow<'c>],
        step: Val<'c>,
        quad: Val<'c>,
        exact: bool,
    ) -> [Val<'c>; 4] {
        fragment_of(e, &self.fragment_words(e, rows, step, quad, exact))
    }

    /// The words of `a_fragment`, one per row of the lane (each its four
    /// elements), before they make the fragment: for the kernels that
    /// apply a norm to them first (`normed_a_fragment`).
    fn fragment_words(
        &self,
        e: &Emitter<'c>,
        rows: &[FragmentRow<'c>],
        step: Val<'c>,
        quad: Val<'c>,
        exact: bool,
    ) -> Vec<Val<'c>> {
        let (at, inside) = self.fragment_column(e, step, quad, exact);
        rows.iter()
            .map(|row| row.words(self, e, at, inside))
            .collect()
    }

    /// Where step `step`'s A fragment for the lanes of quad `quad` starts
    /// in a row of `a` (`16 step + 4 quad`), and unless `exact` whether the
    /// step is inside K (a step past it reads the row's last columns).
    fn fragment_column(
        &self,
        e: &Emitter<'c>,
        step: Val<'c>,
        quad: Val<'c>,
        exact: bool,
    ) -> (Val<'c>, Option<Val<'c>>) {
        let k = self.k.k;
        let at = e.add(
            e.mul(step, self.c(MMA_K)),
            e.mul(quad, self.c(ROWS_PER_LANE)),
        );
        if exact {
            return (at, None);
        }
        let inside = e.cmp(CmpiPredicate::Ult, step, self.c(k / MMA_K));
        (e.min(at, self.c(k - ROWS_PER_LANE)), Some(inside))
    }

    /// The A fragment through the norm (`sums_statistics_in_loop`): the
    /// lane's four elements of each of its rows of `a` (`x_words`, read
    /// from global memory with the step's weight where the norm streams,
    /// from the raw staged rows in the `_norm_in_loop` twin), times
    /// the norm's column factors (rounded to bf16 as the staged rows are),
    /// each element also a step of the row's statistic, summed into the
    /// lane's part of it (`parts`, one per row; steps past K count none).
    fn normed_a_fragment(
        &self,
        e: &Emitter<'c>,
        x_words: &[Val<'c>],
        step: Val<'c>,
        quad: Val<'c>,
        exact: bool,
        parts: &mut [Val<'c>],
    ) -> [Val<'c>; 4] {
        let (prologue, functions) = self.streamed_norm();
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let words_ty = e.vector(2, TensorCore::i32(e));
        let (at, inside) = self.fragment_column(e, step, quad, exact);
        let column_operands = self.column_sources(e);
        let column_factors = prologue.column_vectors(e, &column_operands, at, ROWS_PER_LANE);
        let words: Vec<Val<'c>> = x_words
            .iter()
            .zip(parts.iter_mut())
            .map(|(x_words, part)| {
                let x = e.reinterpret(*x_words, e.vector(ROWS_PER_LANE, bf16));
                let mut factors = x;
                let mut sum = *part;
                for l in 0..ROWS_PER_LANE {
                    let element = e.extract(x, l);
                    let y = prologue.column_factors(e, functions, element, &column_factors, l);
                    factors = e.insert(factors, y, l);
                    sum = e.call(&prologue.step, &[element, sum], e.f32());
                }
                let normed = e.reinterpret(factors, words_ty);
                match inside {
                    Some(inside) => {
                        *part = e.select(inside, sum, *part);
                        e.select(inside, normed, e.zero(words_ty))
                    }
                    None => {
                        *part = sum;
                        normed
                    }
                }
            })
            .collect();
        fragment_of(e, &words)
    }

    /// The prologue and its factor functions of a kernel that streams its
    /// norm.
    fn streamed_norm(&self) -> (&Prologue, &RowScaleFunctions) {
        let prologue = self.k.prologue.as_ref();
        prologue
            .zip(self.row_scale())
            .expect("internal: a streamed norm is a prologue with a row scale")
    }

    /// Where the loop reads the prologue's column operands: the block's
    /// copies in shared memory where it stages them
    /// (`GemvTile::stages_column_operands`), else the kernel's parameters.
    fn column_sources(&self, e: &Emitter<'c>) -> Vec<Val<'c>> {
        let (_, column_operands) = self.prologue_parameters();
        if !self.stages_column_operands() {
            return column_operands;
        }
        let shape = self.k.gemv_shape();
        let prologue = self
            .k
            .prologue
            .as_ref()
            .expect("internal: staged columns have a prologue");
        let mut offset = self.tile.column_operands_offset(&shape);
        prologue
            .columns
            .iter()
            .map(|scalar| {
                let at = e.byte_offset(e.dynamic_shared(), self.c(offset));
                offset += self.k.k * scalar.bytes().expect("checked");
                at
            })
            .collect()
    }

    /// Whether the kernel applies its norm prologue to `a` as it reads it
    /// (`GemvShape::streamed`), staging no rows.
    pub(super) fn streams_norm(&self) -> bool {
        self.tile.engine == super::gemv::Engine::TensorCores && self.k.gemv_shape().streamed
    }

    /// Whether the kernel stages the rows of `a` raw and applies its norm
    /// prologue as it reads them from shared memory
    /// (`GemvTile::norm_in_loop`).
    pub(super) fn norm_in_loop(&self) -> bool {
        self.tile.engine == super::gemv::Engine::TensorCores
            && self.tile.norm_in_loop
            && self.row_scale().is_some()
            && !self.streams_norm()
    }

    /// Whether the block copies the prologue's column operands to shared
    /// memory (`GemvTile::stages_column_operands`, which lays them out),
    /// the loop of the twin or of the streamed norm reading them there:
    /// one answer for the copies (`load_column_operands`) and the reads
    /// (`column_sources`).
    fn stages_column_operands(&self) -> bool {
        self.sums_statistics_in_loop() && self.tile.stages_column_operands(&self.k.gemv_shape())
    }

    /// Whether the kernel sums the row statistics in its loop (streamed
    /// or from the raw staged rows), the k-groups' parts added up by the
    /// output stage (`streamed_statistic`).
    pub(super) fn sums_statistics_in_loop(&self) -> bool {
        self.streams_norm() || self.norm_in_loop()
    }

    /// After the loop of a kernel that streams its norm: each lane's
    /// `parts` of its rows' statistics (rows g and g + 8 of its k-group's
    /// steps, the lane's four columns of each) summed over the quad's four
    /// lanes, which together read all of each step's columns, and stored
    /// by the warps of the first column tile (the others read the same
    /// rows) as their k-group's part (`statistic_parts_offset`).
    fn store_statistic_parts(
        &self,
        parts: &[Val<'c>],
        (k_group, column_tile): (Val<'c>, Val<'c>),
        lane: Val<'c>,
    ) {
        let (e, tile) = (self.e, self.tile);
        let group = e.div(lane, self.c(ROWS_PER_LANE));
        let quad = e.rem(lane, self.c(ROWS_PER_LANE));
        let owner = e.and(
            e.cmp(CmpiPredicate::Eq, column_tile, self.c(0)),
            e.cmp(CmpiPredicate::Eq, quad, self.c(0)),
        );
        let base = self.statistic_parts(e);
        for (half, part) in parts.iter().enumerate() {
            let total = e.lanes_sum(*part, (ROWS_PER_LANE - 1) as u32);
            let row = e.add(group, self.c(half as u64 * HALF));
            let at = e.add(e.mul(k_group, self.c(tile.rows)), row);
            e.when(owner, |e| {
                e.store(total, e.byte_offset(base, e.mul(at, self.c(4))), 4)
            });
        }
    }

    /// Where the k-groups' parts of the row statistics start in shared
    /// memory (`streams_norm`).
    fn statistic_parts(&self, e: &Emitter<'c>) -> Val<'c> {
        let offset = self.tile.statistic_parts_offset(&self.k.gemv_shape());
        e.byte_offset(e.dynamic_shared(), self.c(offset))
    }

    /// Row `row`'s statistic where the kernel streams its norm: the
    /// statistic's initial value plus every k-group's part.
    pub(super) fn streamed_statistic(&self, e: &Emitter<'c>, row: Val<'c>) -> Val<'c> {
        let (init, _) = self.prologue_parameters();
        let base = self.statistic_parts(e);
        let mut statistic = init.expect("internal: a streamed norm has a statistic");
        for g in 0..self.tile.k_groups {
            let at = e.add(self.c(g * self.tile.rows), row);
            let part = e.load(e.byte_offset(base, e.mul(at, self.c(4))), e.f32(), 4);
            statistic = e.addf(statistic, part);
        }
        statistic
    }

    /// Where lane `lane` of the warp of k-group `k_group` and column tile
    /// `column_tile` keeps its accumulators.
    pub(super) fn lane_sums(
        &self,
        e: &Emitter<'c>,
        sums: Val<'c>,
        k_group: Val<'c>,
        column_tile: Val<'c>,
        lane: Val<'c>,
    ) -> Val<'c> {
        let tiles = self.k.weights * self.tile.columns / self.tile.warp_columns();
        let warp = e.add(e.mul(k_group, self.c(tiles)), column_tile);
        let at = e.add(e.mul(warp, self.c(WARP)), lane);
        e.byte_offset(sums, e.mul(at, self.c(LANE_WORDS * 4)))
    }

    /// Where the sum of k-group `group` at row `row` and column `column` of
    /// the block (the second weight's columns after the first's) sits: the
    /// accumulator `4 j + q` of the lane that held it, where the block's
    /// column 64 tile + 8 (2t + h) + j is column 2t + h of `mma` j, and row
    /// g + 8 half is row g (+ 8) of it, in accumulator q = 2 half + h (the
    /// IR form of `accumulator_of`, which the tests check against the
    /// `mma`'s layout).
    pub(super) fn mma_sum_slot(
        &self,
        e: &Emitter<'c>,
        sums: Val<'c>,
        group: Val<'c>,
        row: Val<'c>,
        column: Val<'c>,
    ) -> Val<'c> {
        if self.k.weight_transposed {
            return self.linear_mma_sum_slot(e, sums, group, row, column);
        }
        let column_tile = e.div(column, self.c(MMA_COLUMNS));
        let in_tile = e.rem(column, self.c(MMA_COLUMNS));
        let j = e.rem(in_tile, self.c(PIECE));
        let mma_column = e.div(in_tile, self.c(PIECE));
        let t = e.div(mma_column, self.c(2));
        let h = e.rem(mma_column, self.c(2));
        let g = e.rem(row, self.c(HALF));
        let half = e.div(row, self.c(HALF));
        let lane = e.add(e.mul(g, self.c(ROWS_PER_LANE)), t);
        let q = e.add(e.mul(half, self.c(2)), h);
        let index = e.add(e.mul(j, self.c(PER_MMA)), q);
        let base = self.lane_sums(e, sums, group, column_tile, lane);
        e.byte_offset(base, e.mul(index, self.c(4)))
    }

    /// The lane's rows of `a` in the A fragment (g, and g + 8 for 16
    /// rows): staged in shared memory through the prologue when there is
    /// one (`stage_rows`), else read from global memory.
    pub(super) fn fragment_rows(
        &self,
        m: Val<'c>,
        a: Val<'c>,
        group: Val<'c>,
        shared: Val<'c>,
        statistics: Val<'c>,
    ) -> Vec<FragmentRow<'c>> {
        let (e, k) = (self.e, self.k);
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let stride = GemvTile::staged_row_stride(k.k);
        let staged = self.stages_rows();
        if staged {
            self.stage_rows(m, a, shared, statistics);
        }
        (0..self.halves() as u64)
            .map(|half| {
                let r = e.add(group, self.c(half * HALF));
                if staged {
                    FragmentRow::Staged(e.byte_offset(shared, e.mul(r, self.c(stride))))
                } else {
                    FragmentRow::Global {
                        start: e.gep(a, e.mul(r, self.c(k.lda)), bf16),
                        present: e.cmp(CmpiPredicate::Ult, r, m),
                    }
                }
            })
            .collect()
    }

    /// The lane's rows of `a` in the A fragment: g, and g + 8 for 16 rows.
    pub(super) fn halves(&self) -> usize {
        if self.tile.rows > HALF { 2 } else { 1 }
    }

    /// Whether the kernel stages the rows of `a` in shared memory: through
    /// the prologue when there is one (unless it streams it), without one
    /// where the tiling says so (`GemvTile::stage_a`), and always with the
    /// TMA (whose consumers would otherwise wait on global memory for every
    /// step).
    pub(super) fn stages_rows(&self) -> bool {
        ((self.k.prologue.is_some() || self.tile.stage_a) && !self.streams_norm())
            || self.tile.engine == super::gemv::Engine::Tma
    }

    /// The rows of `a` in shared memory as bf16, through the prologue when
    /// there is one, each row's statistic reduced by one warp first (row r
    /// at r x the stride; rows past `m` zero).
    fn stage_rows(&self, m: Val<'c>, a: Val<'c>, shared: Val<'c>, statistics: Val<'c>) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let f32 = e.f32();
        let threads = tile.threads(k.weights);
        let tid = e.cast(e.thread_id(), e.i64());
        let warp = e.div(tid, self.c(WARP));
        let lane = e.rem(tid, self.c(WARP));
        // The kernel's parameters (closures below get their own blocks).
        let (init, column_operands) = self.prologue_parameters();
        let row_of = |e: &Emitter<'c>, r: Val<'c>| e.gep(a, e.mul(r, self.c(k.lda)), bf16);
        let statistic_at =
            |e: &Emitter<'c>, r: Val<'c>| e.byte_offset(statistics, e.mul(r, self.c(4)));
        let vector_ty = e.vector(PIECE, bf16);
        let stride = GemvTile::staged_row_stride(k.k);
        let staged_at = |e: &Emitter<'c>, r: Val<'c>, start: Val<'c>| {
            e.byte_offset(
                shared,
                e.add(e.mul(r, self.c(stride)), e.mul(start, self.c(2))),
            )
        };
        // Warp w reduces rows w, w + warps, ... (the prologue reads rows in
        // 16-byte vectors: `SkinnyMatmul::problem`), and keeps each row as
        // it read it in its staged place, where the elements' pass below
        // reads it back from shared memory rather than from L2 again.
        // With the row factor moved after the products (`row_scale`), this
        // pass stages each row's column factors and is the only one: rows
        // the call does not have are walked too, staging zeros.
        let row_scale = self.row_scale();
        // Applied in the loop instead, the prologue leaves the rows raw.
        let staged_prologue = k.prologue.as_ref().filter(|_| !self.norm_in_loop());
        if let (Some(prologue), Some(init)) = (staged_prologue, init) {
            e.for_range(warp, self.c(tile.rows), self.c(threads / WARP), |e, r| {
                let present = e.cmp(CmpiPredicate::Ult, r, m);
                let vectors = e.select(present, self.c(k.k / PIECE), self.c(0));
                let row = row_of(e, r);
                // `batch` loads in flight before the first is summed.
                let batch = (k.k / PIECE).div_ceil(WARP).clamp(1, MAX_BATCH);
                let partial = e.for_range_carrying(
                    lane,
                    vectors,
                    self.c(WARP * batch),
                    e.cf32(0.0),
                    |e, first, acc| {
                        let loaded: Vec<(Val<'c>, Val<'c>, Val<'c>)> = (0..batch)
                            .map(|p| {
                                let v = e.add(first, self.c(p * WARP));
                                let inside = e.cmp(CmpiPredicate::Ult, v, vectors);
                                let at = e.mul(v, self.c(PIECE));
                                (inside, at, row_piece(e, row, at, inside))
                            })
                            .collect();
                        // Each vector's sum from zero, then added: chains
                        // of 8 steps, not one of the whole row (the
                        // statistic is a sum: `matmul_groups`).
                        let mut acc = acc;
                        for (inside, at, vector) in loaded {
                            let staged = match row_scale {
                                Some(functions) => {
                                    // The norm weight's piece in one load:
                                    // each lane's vectors are at columns
                                    // of their own.
                                    // (Clamped into the row: a vector
                                    // past it is not stored.)
                                    let start = e.min(at, self.c(k.k - PIECE));
                                    let pieces = prologue.column_pieces(e, &column_operands, start);
                                    let mut factors = vector;
                                    for l in 0..PIECE {
                                        let x = e.extract(vector, l);
                                        let y =
                                            prologue.column_factors(e, functions, x, &pieces, l);
                                        factors = e.insert(factors, y, l);
                                    }
                                    factors
                                }
                                None => vector,
                            };
                            e.when(inside, |e| e.store(staged, staged_at(e, r, at), 16));
                            let mut sum = e.cf32(0.0);
                            for l in 0..PIECE {
                                sum = e.call(&prologue.step, &[e.extract(vector, l), sum], f32);
                            }
                            acc = e.addf(acc, e.select(inside, sum, e.cf32(0.0)));
                        }
                        acc
                    },
                );
                let value = e.addf(init, e.warp_sum(partial));
                let first = e.cmp(CmpiPredicate::Eq, lane, self.c(0));
                e.when(first, |e| e.store(value, statistic_at(e, r), 4));
                // Rows the call does not have: zeros (their column factors
                // need not be zero at zero).
                if row_scale.is_some() {
                    let absent = e.cmp(CmpiPredicate::Uge, r, m);
                    e.when(absent, |e| {
                        e.for_range(lane, self.c(k.k / PIECE), self.c(WARP), |e, v| {
                            let at = e.mul(v, self.c(PIECE));
                            e.store(e.zero(vector_ty), staged_at(e, r, at), 16);
                        });
                    });
                }
            });
            e.sync_threads();
            if row_scale.is_some() {
                return;
            }
        }
        // The twin's column operands: their loads in flight with the rows'.
        let columns = self.load_column_operands(e);
        // The elements in 16-byte pieces, `batch` per thread at a time so
        // that their loads are all in flight before the first is used.
        let per_row = k.k / PIECE;
        let total = tile.rows * per_row;
        let batch = total.div_ceil(threads).clamp(1, MAX_BATCH);
        e.for_range(tid, self.c(total), self.c(threads * batch), |e, first| {
            let pieces: Vec<(Val<'c>, Val<'c>, Val<'c>, Val<'c>)> = (0..batch)
                .map(|p| {
                    let index = e.add(first, self.c(p * threads));
                    let r = e.div(index, self.c(per_row));
                    let start = e.mul(e.rem(index, self.c(per_row)), self.c(PIECE));
                    let inside = e.and(
                        e.cmp(CmpiPredicate::Ult, index, self.c(total)),
                        e.cmp(CmpiPredicate::Ult, r, m),
                    );
                    // With a prologue the row is in its staged place already.
                    let loaded = e.choose(
                        inside,
                        vector_ty,
                        |e| match staged_prologue {
                            Some(_) => e.load(staged_at(e, r, start), vector_ty, 16),
                            None => e.load(e.gep(row_of(e, r), start, bf16), vector_ty, 16),
                        },
                        |e| e.zero(vector_ty),
                    );
                    (index, r, start, loaded)
                })
                .collect();
            for (index, r, start, loaded) in pieces {
                let mut applied = loaded;
                if let Some(prologue) = staged_prologue {
                    let statistic = e.load(statistic_at(e, r), f32, 4);
                    // The norm weight element by element: in 16-byte
                    // loads too (all of a thread's pieces' at once) the
                    // kernel measured 2-5 µs slower
                    // (bench/results/2026-11-26-prologue-h200.md).
                    for l in 0..PIECE {
                        let column = e.add(start, self.c(l));
                        let x = e.extract(loaded, l);
                        let y = prologue.element(e, x, statistic, &column_operands, column);
                        applied = e.insert(applied, y, l);
                    }
                }
                let present = e.cmp(CmpiPredicate::Ult, r, m);
                let elements = e.select(present, applied, e.zero(vector_ty));
                let exists = e.cmp(CmpiPredicate::Ult, index, self.c(total));
                e.when(exists, |e| e.store(elements, staged_at(e, r, start), 16));
            }
        });
        self.store_column_operands(e, columns);
        e.sync_threads();
    }

    /// The pieces of `load_column_operands` in their places in shared
    /// memory (`column_sources`).
    fn store_column_operands(&self, e: &Emitter<'c>, columns: Vec<ColumnPiece<'c>>) {
        let sources = self.column_sources(e);
        for c in columns {
            let at = e.gep(sources[c.operand], c.start, c.element);
            e.when(c.inside, |e| e.store(c.piece, at, 16));
        }
    }

    /// The column operands' pieces that this thread copies to shared
    /// memory, loaded (`GemvTile::stages_column_operands`; none where the
    /// kernel reads them from global memory): thread `tid` of the block's
    /// `threads` takes pieces `tid`, `tid + threads`, ... of each operand.
    fn load_column_operands(&self, e: &Emitter<'c>) -> Vec<ColumnPiece<'c>> {
        let k = self.k;
        let threads = self.tile.threads(k.weights);
        let tid = e.cast(e.thread_id(), e.i64());
        let Some(prologue) = k
            .prologue
            .as_ref()
            .filter(|_| self.stages_column_operands())
        else {
            return Vec::new();
        };
        let (_, operands) = self.prologue_parameters();
        let pieces = k.k / PIECE;
        let mut loaded = Vec::new();
        for (operand, (scalar, at)) in prologue.columns.iter().zip(&operands).enumerate() {
            let element = e.float(*scalar).expect("checked");
            let vector = e.vector(PIECE, element);
            let align = (scalar.bytes().expect("checked") * PIECE).min(16);
            for j in 0..pieces.div_ceil(threads) {
                let v = e.add(tid, self.c(j * threads));
                let inside = e.cmp(CmpiPredicate::Ult, v, self.c(pieces));
                let start = e.mul(e.min(v, self.c(pieces - 1)), self.c(PIECE));
                let piece = e.load(e.gep(*at, start, element), vector, align);
                loaded.push(ColumnPiece {
                    operand,
                    element,
                    inside,
                    start,
                    piece,
                });
            }
        }
        loaded
    }
}

/// A piece of `PIECE` elements of a column operand that a thread copies to
/// shared memory (`load_column_operands`): which operand, its element type,
/// whether the piece is inside K, its first column and its loaded value.
struct ColumnPiece<'c> {
    operand: usize,
    element: melior::ir::Type<'c>,
    inside: Val<'c>,
    start: Val<'c>,
    piece: Val<'c>,
}

/// The A fragment (a0..a3) from the words of the lane's rows: row g's
/// first, then row g + 8's (zero with 8 rows).
fn fragment_of<'c>(e: &Emitter<'c>, words: &[Val<'c>]) -> [Val<'c>; 4] {
    let low = words[0];
    let high = match words.get(1) {
        Some(high) => *high,
        None => e.zero(e.vector(2, TensorCore::i32(e))),
    };
    [
        e.extract(low, 0),
        e.extract(high, 0),
        e.extract(low, 1),
        e.extract(high, 1),
    ]
}

/// One of a lane's rows of `a` in the A fragment.
#[derive(Clone, Copy)]
pub(super) enum FragmentRow<'c> {
    /// Staged in shared memory (zero past the call's rows).
    Staged(Val<'c>),
    /// In global memory; `present`: whether the call has the row.
    Global { start: Val<'c>, present: Val<'c> },
}

impl<'c> FragmentRow<'c> {
    /// Four elements of the row at column `at`, packed as two words; zero
    /// where the call has no such row or where `inside` is false.
    pub(super) fn words(
        &self,
        gemv: &Gemv<'_, 'c>,
        e: &Emitter<'c>,
        at: Val<'c>,
        inside: Option<Val<'c>>,
    ) -> Val<'c> {
        self.words_of(gemv, e, at, inside, 2)
    }

    /// `count` words (2 elements each) of the row from column `at` (a
    /// multiple of `2 count`): one load of `4 count` bytes where the rows
    /// allow, else element by element; zero where the call has no such
    /// row or where `inside` is false.
    pub(super) fn words_of(
        &self,
        gemv: &Gemv<'_, 'c>,
        e: &Emitter<'c>,
        at: Val<'c>,
        inside: Option<Val<'c>>,
        count: u64,
    ) -> Val<'c> {
        let k = gemv.k;
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let words = e.vector(count, TensorCore::i32(e));
        let bytes = 4 * count;
        let zero_outside = |v: Val<'c>| match inside {
            Some(inside) => e.select(inside, v, e.zero(words)),
            None => v,
        };
        let (start, present) = match *self {
            FragmentRow::Staged(start) => {
                let loaded = e.load(e.byte_offset(start, e.mul(at, gemv.c(2))), words, bytes);
                return zero_outside(loaded);
            }
            FragmentRow::Global { start, present } => (start, present),
        };
        let read = match inside {
            Some(inside) => e.and(present, inside),
            None => present,
        };
        // One load where the rows allow (K is a multiple of 16 and `at`
        // of `2 count`), else element by element.
        let elements = 2 * count;
        let aligned = k.lda.is_multiple_of(elements) && k.a_slice.is_multiple_of(elements);
        let all = e.vector(elements, bf16);
        e.choose(
            read,
            words,
            |e| {
                if aligned {
                    return e.load(e.gep(start, at, bf16), words, bytes);
                }
                let mut x = e.zero(all);
                for l in 0..elements {
                    let at = e.add(at, gemv.c(l));
                    x = e.insert(x, e.load(e.gep(start, at, bf16), bf16, 2), l);
                }
                e.reinterpret(x, words)
            },
            |e| e.zero(words),
        )
    }
}

/// Where accumulator `index` (`4 j + q`) of lane `lane` of a warp lands in
/// its 16 x 64 tile of the output, as `(row, column)`: `mma` j's row g (+ 8
/// for q >= 2) and column 2t + q % 2, which holds the tile's column
/// 8 (2t + q % 2) + j (lane (g, t) loaded columns [8g, 8g + 8) and gave the
/// `mma`s their column g).
#[cfg(test)]
fn accumulator_position(lane: u64, index: u64) -> (u64, u64) {
    let (g, t) = (lane / ROWS_PER_LANE, lane % ROWS_PER_LANE);
    let (j, q) = (index / PER_MMA, index % PER_MMA);
    (g + HALF * (q / 2), PIECE * (2 * t + q % 2) + j)
}

/// The inverse, which `mma_sum_slot` builds as IR: the lane and the
/// accumulator that hold `(row, column)` of the tile.
#[cfg(test)]
fn accumulator_of(row: u64, column: u64) -> (u64, u64) {
    let (j, mma_column) = (column % PIECE, column / PIECE);
    let (t, h) = (mma_column / 2, mma_column % 2);
    let (g, half) = (row % HALF, row / HALF);
    (g * ROWS_PER_LANE + t, j * PER_MMA + half * 2 + h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::gemv::GemvShape;

    #[test]
    fn every_accumulator_has_one_place_in_the_tile() {
        let mut seen = std::collections::HashSet::new();
        for lane in 0..WARP {
            for index in 0..MMAS * PER_MMA {
                let (row, column) = accumulator_position(lane, index);
                assert!(row < 2 * HALF && column < MMA_COLUMNS);
                assert!(seen.insert((row, column)), "({row}, {column}) twice");
                assert_eq!(accumulator_of(row, column), (lane, index));
            }
        }
        assert_eq!(seen.len() as u64, 2 * HALF * MMA_COLUMNS);
        // A lane's accumulators fit the row of the sums it stores them in.
        const { assert!(MMAS * PER_MMA <= LANE_WORDS) };
    }

    #[test]
    fn the_tensor_core_tilings_fit_llama_shapes() {
        let (pair, single) = (GemvShape::LLAMA_PAIR, GemvShape::LLAMA_DOWN);
        assert_eq!(GemvTile::PAIR_MMA.problem(&pair), None);
        assert_eq!(GemvTile::SINGLE_MMA.problem(&single), None);
        assert_eq!(GemvTile::PAIR_MMA.threads(2), 512);
        assert_eq!(GemvTile::SINGLE_MMA.threads(1), 512);
        // Staged rows of 16K columns do not fit; read from global memory
        // (no prologue) they need no room.
        let long = GemvShape { k: 16384, ..pair };
        assert!(
            GemvTile::PAIR_MMA
                .problem(&long)
                .unwrap()
                .contains("as bf16")
        );
        // Streaming its norm, the pair stages no rows: any K fits.
        let streamed = GemvShape {
            streamed: true,
            ..long
        };
        assert_eq!(GemvTile::PAIR_MMA.problem(&streamed), None);
        let long_single = GemvShape {
            k: 1 << 20,
            ..single
        };
        assert_eq!(GemvTile::SINGLE_MMA.problem(&long_single), None);
        // The staged rows' stride puts a fragment's eight rows in
        // different banks: 8 words apart modulo the 32 banks.
        for k in [1024, 2064, 3584, 4096, 5120] {
            assert_eq!(GemvTile::staged_row_stride(k) / 4 % 32, 8, "K = {k}");
        }
    }

    proptest::proptest! {
        /// Whatever the tiling and shape, an accepted tensor-core GEMV's
        /// regions fit its shared memory and do not overlap: the staged
        /// rows (with a prologue) and the sums both start at 0 (the sums
        /// take the rows' place after the loop), and the statistics follow
        /// both; a kernel that streams its norm stages no rows and keeps its
        /// k-groups' statistic parts after the statistics, then the norm
        /// weight.
        #[test]
        fn accepted_layouts_fit_and_keep_the_statistics_apart(
            per_weight in 1u64..4,
            k_groups in 1u64..40,
            unroll in 1u64..5,
            sixteen in proptest::bool::ANY,
            k_steps in 1u64..1200,
            weights in 1u64..3,
            staged in proptest::bool::ANY,
            streamed in proptest::bool::ANY,
        ) {
            let streamed = staged && streamed;
            // (The pair's tiling, at other sizes: prefetching nothing,
            // staging `a` only through a prologue.)
            let tile = GemvTile {
                columns: per_weight * MMA_COLUMNS,
                k_groups,
                unroll,
                rows: if sixteen { 16 } else { 8 },
                ..GemvTile::PAIR_MMA
            };
            let shape = GemvShape { k: k_steps * MMA_K, weights, staged, streamed, column_bytes: 2 * u64::from(staged) };
            if tile.problem(&shape).is_none() {
                let statistics = tile.statistics_offset(&shape);
                let sums = tile.threads(weights) * LANE_WORDS * 4;
                proptest::prop_assert!(statistics >= sums);
                let rows = tile.rows * GemvTile::staged_row_stride(shape.k);
                if staged && !streamed {
                    proptest::prop_assert!(statistics >= rows);
                }
                let parts = tile.statistic_parts_offset(&shape);
                proptest::prop_assert!(parts >= statistics + tile.rows * 4);
                if streamed {
                    // Then the norm weight, on a 16-byte boundary.
                    let columns = tile.column_operands_offset(&shape);
                    proptest::prop_assert_eq!(
                        columns,
                        (parts + tile.k_groups * tile.rows * 4).next_multiple_of(16)
                    );
                    proptest::prop_assert_eq!(
                        tile.shared_bytes(&shape),
                        columns + shape.k * shape.column_bytes
                    );
                    // Staging no rows, the sums alone set where the rest goes.
                    proptest::prop_assert_eq!(statistics, sums);
                }
                proptest::prop_assert!(tile.shared_bytes(&shape) <= super::super::kernel::MAX_SHARED);
                proptest::prop_assert!(tile.threads(weights) <= 1024);
                proptest::prop_assert_eq!(tile.threads(weights) % WARP, 0);
            }
        }
    }

    #[test]
    fn tensor_core_tilings_that_cannot_run_are_refused() {
        let rows = GemvTile {
            rows: 12,
            ..GemvTile::PAIR_MMA
        };
        assert!(rows.tiling_problem(2).unwrap().contains("8 or 16 rows"));
        let columns = GemvTile {
            columns: 48,
            ..GemvTile::PAIR_MMA
        };
        assert!(
            columns
                .tiling_problem(1)
                .unwrap()
                .contains("multiple of 32")
        );
        let wide = GemvTile {
            k_groups: 32,
            ..GemvTile::PAIR_MMA
        };
        assert!(wide.tiling_problem(2).unwrap().contains("at most 1024"));
    }
}
