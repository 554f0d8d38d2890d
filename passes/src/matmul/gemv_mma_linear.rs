//! The tensor-core GEMV for weights stored n x k (nn.Linear's layout;
//! `SkinnyMatmul::weight_transposed`), for calls of 2 to 16 rows: the
//! operands of `mma.sync` m16n8k16 swapped, as TensorRT-LLM's skinny GEMMs
//! do. A column of the product is a row of the weight, contiguous over K,
//! which is just the layout of the `mma`'s A operand (16 rows x 16 of K,
//! K-major); the call's rows of `a` are its B operand (K-major too, 8 rows
//! of `a` per `mma`), and each `mma` gives 16 columns of 8 rows of the
//! product.
//!
//! A warp owns 64 columns of one weight (a column tile: 4 fragments of 16
//! weight rows; or 32 columns, 2 fragments, where the block's columns are
//! not a multiple of 64: `GemvTile::warp_columns`) and every
//! `k_groups`-th run of `unroll` 32-element steps of K (each row's
//! `64 unroll` contiguous bytes). In a step, lane `(g, t)` (`g = lane / 4`,
//! `t = lane % 4`) loads the 16-byte piece at K `32 step + 8 t` of weight
//! rows `16 f + g` and `16 f + g + 8` of each fragment `f`: 8 loads (4 with
//! 32 columns), and the warp reads 64 contiguous bytes of each of its rows.
//! The `mma`'s K order is free as long as both
//! operands agree, so a piece's first four elements are the fragment's k
//! indices 2t, 2t + 1, 2t + 8 and 2t + 9 of the step's first 16-element
//! `mma`, its last four those of the second: no shuffle between lanes. The
//! B fragment of row g (and g + 8 for more than 8 rows) of `a` is then the
//! same 8 elements of that row, one 16-byte read per step, from shared
//! memory where the block stages `a` (through the fused prologue, as
//! `gemv_mma` does) or from global memory.
//!
//! After the loop a lane holds, for each fragment and each 8 rows of `a`,
//! the `mma`'s 4 accumulators: columns 16 f + g (and + 8) at rows 2t and
//! 2t + 1. They meet the other k-groups' in the shared memory the staged
//! rows took, and each thread writes whole output elements through the
//! epilogue, as in `gemv_mma`.

use super::gemv::{Gemv, LINE_ELEMENTS, PIECE};
use super::gemv_mma::{FragmentRow, HALF, MmaLane, PER_MMA, ROWS_PER_LANE};
use super::kernel::WARP;
use super::tensor_core::TensorCore;
use crate::collectives::emit::{Emitter, Val};
use melior::dialect::arith::CmpiPredicate;

/// Elements of K of one step: each of a row's 4 lanes loads a piece of 8.
const STEP_K: u64 = ROWS_PER_LANE * PIECE;
/// Weight rows (columns of the product) of one `mma`'s A fragment.
const FRAGMENT_ROWS: u64 = 2 * HALF;
/// Words of a piece (two bf16 each), and of one `mma`'s share of it.
const PIECE_WORDS: u64 = PIECE / 2;
const MMA_WORDS: u64 = 2;

impl<'c> Gemv<'_, 'c> {
    pub(super) fn emit_mma_linear(&self) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let MmaLane {
            lane,
            group,
            quad,
            column_tile,
            k_group,
            n0,
            tile_start,
            column: first_row,
            m,
            a,
            out,
            weight,
            shared,
            statistics,
        } = self.mma_lane(1);
        // (`first_row` is the weight row of the lane's first piece: row g
        // of fragment 0.) A warp's fragments (its 64 or 32 columns: `warp_columns`), the
        // pieces a lane loads per step (rows g and g + 8 of each) and its
        // accumulators.
        let fragments = tile.warp_columns() / FRAGMENT_ROWS;
        let loads = 2 * fragments;
        let accumulators = fragments * 2 * PER_MMA;

        // Iteration j of this warp reads the `unroll` consecutive steps
        // from (j * k_groups + k_group) * unroll: each weight row's
        // 64 * unroll contiguous bytes (the warp's 4 lanes of a row read 64
        // bytes a load). The lane's piece of step `u` of them starts at
        // 32 (that + u) + 8 t.
        let steps = k.k.div_ceil(STEP_K);
        let per_warp = steps.div_ceil(tile.k_groups);
        let iterations = per_warp.div_ceil(tile.unroll);
        let exact = k.k.is_multiple_of(STEP_K * tile.k_groups * tile.unroll)
            && k.n.is_multiple_of(tile.columns);
        let piece_start = |e: &Emitter<'c>, j: Val<'c>, u: u64| {
            let first = e.mul(
                e.add(e.mul(j, self.c(tile.k_groups)), k_group),
                self.c(tile.unroll),
            );
            let step = e.add(first, self.c(u));
            e.add(e.mul(step, self.c(STEP_K)), e.mul(quad, self.c(PIECE)))
        };
        // The lines of the first `prefetch` iterations towards L2, before
        // the wait for the grids before (no value depends on them): an
        // iteration reads 64 unroll contiguous bytes of each of the warp's
        // rows, and lane l takes rows l, l + 32, ... of them.
        let warp_row = e.add(n0, tile_start);
        let iteration_lines = (STEP_K * tile.unroll).div_ceil(LINE_ELEMENTS);
        for j in 0..self.prefetch() {
            let start = e.mul(
                e.add(self.c(j * tile.k_groups), k_group),
                self.c(tile.unroll * STEP_K),
            );
            for r in 0..tile.warp_columns().div_ceil(WARP) {
                let row = e.add(warp_row, e.add(lane, self.c(r * WARP)));
                for l in 0..iteration_lines {
                    let first = e.add(start, self.c(l * LINE_ELEMENTS));
                    self.prefetch_linear(e, weight, (row, first));
                }
            }
        }
        // The rows' 8 elements of K at `start` (zero past K, where the
        // weight's piece is zero too). With an exact tiling every step is
        // inside K but those one iteration past the last (loaded ahead,
        // never used), which are clamped into the rows.
        let b_words = |e: &Emitter<'c>, rows: &[FragmentRow<'c>], start: Val<'c>| {
            let inside = (!exact).then(|| e.cmp(CmpiPredicate::Ult, start, self.c(k.k)));
            let at = e.min(start, self.c(k.k - PIECE));
            rows.iter()
                .map(|row| row.words_of(self, e, at, inside, PIECE_WORDS))
                .collect::<Vec<Val<'c>>>()
        };
        // Rows of `a` in global memory are read with the weight, a step
        // ahead of their `mma`s (from L2, they would otherwise hold up
        // each step); staged ones at their step.
        let global_rows =
            (!self.stages_rows()).then(|| self.fragment_rows(m, a, group, shared, statistics));
        let per_step = (loads as usize) + global_rows.as_ref().map_or(0, Vec::len);
        let load_step = |e: &Emitter<'c>, j: Val<'c>, u: u64| -> Vec<Val<'c>> {
            let first = piece_start(e, j, u);
            let mut loaded: Vec<Val<'c>> = (0..loads)
                .map(|l| {
                    let row = e.add(first_row, self.c(l * HALF));
                    self.linear_piece(e, weight, (row, first), exact)
                })
                .collect();
            if let Some(rows) = &global_rows {
                loaded.extend(b_words(e, rows, first));
            }
            loaded
        };
        // The accumulators, then the first steps, in flight while the rows
        // of `a` are staged.
        let mut inits = vec![e.zero(e.vector(accumulators, e.f32()))];
        for u in 0..tile.unroll {
            inits.extend(load_step(e, self.c(0), u));
        }
        let staged_rows = global_rows
            .is_none()
            .then(|| self.fragment_rows(m, a, group, shared, statistics));
        let words_ty = e.vector(PIECE_WORDS, TensorCore::i32(e));
        let carried = e.for_range_carrying_many(
            (self.c(0), self.c(iterations), self.c(1)),
            &inits,
            |e, iteration, carried| {
                let mut acc = carried[0];
                let mut next = Vec::with_capacity(tile.unroll as usize * per_step);
                for u in 0..tile.unroll {
                    let first = 1 + u as usize * per_step;
                    let pieces: Vec<Val<'c>> = carried[first..first + loads as usize]
                        .iter()
                        .map(|p| e.reinterpret(*p, words_ty))
                        .collect();
                    next.extend(load_step(e, e.add(iteration, self.c(1)), u));
                    let b_rows = match &staged_rows {
                        Some(rows) => b_words(e, rows, piece_start(e, iteration, u)),
                        None => carried[first + loads as usize..first + per_step].to_vec(),
                    };
                    for s in 0..PIECE_WORDS / MMA_WORDS {
                        let word = |v: Val<'c>, w: u64| e.extract(v, MMA_WORDS * s + w);
                        for f in 0..fragments {
                            let (low, high) = (pieces[2 * f as usize], pieces[2 * f as usize + 1]);
                            let a_fragment =
                                [word(low, 0), word(high, 0), word(low, 1), word(high, 1)];
                            for (h, b_row) in b_rows.iter().enumerate() {
                                let b = [word(*b_row, 0), word(*b_row, 1)];
                                let base = (f * 2 + h as u64) * PER_MMA;
                                let c = std::array::from_fn(|q| e.extract(acc, base + q as u64));
                                let d = e.mma_bf16(a_fragment, b, c);
                                for (q, v) in d.into_iter().enumerate() {
                                    acc = e.insert(acc, v, base + q as u64);
                                }
                            }
                        }
                    }
                }
                let mut out = vec![acc];
                out.extend(next);
                out
            },
        );

        // (`mma_sum_slot` finds each sum with `linear_mma_sum_slot`.)
        self.mma_finish(carried[0], (m, out, n0), (k_group, column_tile, lane));
    }

    /// Where the sum of k-group `group` at row `row` and column `column` of
    /// the block (the second weight's columns after the first's) sits: the
    /// accumulator `4 (2 f + h) + 2 hi + lo` of lane `4 g + t`, where the
    /// column is 64 tile + 16 f + 8 hi + g and the row 8 h + 2 t + lo (the
    /// IR form of `accumulator_of`, which the tests check against the
    /// `mma`'s layout).
    pub(super) fn linear_mma_sum_slot(
        &self,
        e: &Emitter<'c>,
        sums: Val<'c>,
        group: Val<'c>,
        row: Val<'c>,
        column: Val<'c>,
    ) -> Val<'c> {
        let warp_columns = self.tile.warp_columns();
        let column_tile = e.div(column, self.c(warp_columns));
        let in_tile = e.rem(column, self.c(warp_columns));
        let f = e.div(in_tile, self.c(FRAGMENT_ROWS));
        let in_fragment = e.rem(in_tile, self.c(FRAGMENT_ROWS));
        let g = e.rem(in_fragment, self.c(HALF));
        let hi = e.div(in_fragment, self.c(HALF));
        let h = e.div(row, self.c(HALF));
        let in_half = e.rem(row, self.c(HALF));
        let t = e.div(in_half, self.c(2));
        let lo = e.rem(in_half, self.c(2));
        let lane = e.add(e.mul(g, self.c(ROWS_PER_LANE)), t);
        let mma = e.add(e.mul(f, self.c(2)), h);
        let index = e.add(e.mul(mma, self.c(PER_MMA)), e.add(e.mul(hi, self.c(2)), lo));
        let base = self.lane_sums(e, sums, group, column_tile, lane);
        e.byte_offset(base, e.mul(index, self.c(4)))
    }
}

/// Where accumulator `index` of lane `lane` lands in its warp's 16 x 64
/// tile of the output, as `(row, column)`: `mma` `2 f + h`'s D rows g
/// (+ 8 for q >= 2) are the fragment's weight rows, columns of the
/// product 16 f + g (+ 8); its D columns 2t + q % 2 are rows 8 h + 2t +
/// q % 2 of `a`.
#[cfg(test)]
fn accumulator_position(lane: u64, index: u64) -> (u64, u64) {
    let (g, t) = (lane / ROWS_PER_LANE, lane % ROWS_PER_LANE);
    let (mma, q) = (index / PER_MMA, index % PER_MMA);
    let (f, h) = (mma / 2, mma % 2);
    (
        HALF * h + 2 * t + q % 2,
        FRAGMENT_ROWS * f + HALF * (q / 2) + g,
    )
}

/// The inverse, which `linear_mma_sum_slot` builds as IR.
#[cfg(test)]
fn accumulator_of(row: u64, column: u64) -> (u64, u64) {
    let (f, in_fragment) = (column / FRAGMENT_ROWS, column % FRAGMENT_ROWS);
    let (g, hi) = (in_fragment % HALF, in_fragment / HALF);
    let (h, in_half) = (row / HALF, row % HALF);
    let (t, lo) = (in_half / 2, in_half % 2);
    (g * ROWS_PER_LANE + t, (f * 2 + h) * PER_MMA + hi * 2 + lo)
}

/// Which elements of K lane `lane`'s A fragment (the weight) and B
/// fragment (`a`) give the `mma`'s k index `kk` in sub-step `s` of a step
/// (relative to the step's start): they must agree for every lane that
/// holds `kk` in either operand.
#[cfg(test)]
fn k_of(lane: u64, s: u64, kk: u64) -> u64 {
    let t = lane % ROWS_PER_LANE;
    assert!(kk / 2 % 4 == t, "lane {lane} does not hold k {kk}");
    // a0a1 / b0b1: k 2t, 2t + 1 are word 2s of the piece; a4a5 / b2b3:
    // 2t + 8, 2t + 9 are word 2s + 1.
    let word = MMA_WORDS * s + kk / 8;
    PIECE * t + 2 * word + kk % 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::gemv::MMA_COLUMNS;
    use crate::matmul::kernel::WARP;

    /// The most fragments of a warp (64 columns), and of accumulators of a
    /// lane: 4 per fragment and 8 rows of `a`.
    const FRAGMENTS: u64 = MMA_COLUMNS / FRAGMENT_ROWS;
    const ACCUMULATORS: u64 = FRAGMENTS * 2 * PER_MMA;
    use crate::matmul::gemv::{GemvShape, GemvTile};
    use crate::matmul::gemv_mma::LANE_WORDS;

    #[test]
    fn every_accumulator_has_one_place_in_the_tile() {
        let mut seen = std::collections::HashSet::new();
        for lane in 0..WARP {
            for index in 0..ACCUMULATORS {
                let (row, column) = accumulator_position(lane, index);
                assert!(row < 2 * HALF && column < MMA_COLUMNS);
                assert!(seen.insert((row, column)), "({row}, {column}) twice");
                assert_eq!(accumulator_of(row, column), (lane, index));
            }
        }
        assert_eq!(seen.len() as u64, 2 * HALF * MMA_COLUMNS);
        const { assert!(ACCUMULATORS <= LANE_WORDS) };
        // A warp of 32 columns keeps the first half of each lane's
        // accumulators: exactly the tile's first 32 columns.
        for lane in 0..WARP {
            for index in 0..ACCUMULATORS {
                let (_, column) = accumulator_position(lane, index);
                assert_eq!(column < MMA_COLUMNS / 2, index < ACCUMULATORS / 2);
            }
        }
    }

    #[test]
    fn a_step_covers_each_element_of_k_once_per_sub_step() {
        // Over the 4 lanes of a row (t = 0..3) and the 16 k of an `mma`,
        // sub-steps 0 and 1 cover the step's 32 elements exactly once.
        let mut seen = std::collections::HashSet::new();
        for s in 0..PIECE_WORDS / MMA_WORDS {
            for t in 0..ROWS_PER_LANE {
                for kk in [2 * t, 2 * t + 1, 2 * t + 8, 2 * t + 9] {
                    let element = k_of(t, s, kk);
                    assert!(element < STEP_K);
                    // The lane's piece starts at 8 t.
                    assert_eq!(element / PIECE, t);
                    assert!(seen.insert(element), "element {element} twice");
                }
            }
        }
        assert_eq!(seen.len() as u64, STEP_K);
    }

    #[test]
    fn the_linear_tensor_core_tilings_fit_llama_shapes() {
        let (pair, single) = (GemvShape::LLAMA_PAIR, GemvShape::LLAMA_DOWN);
        assert_eq!(GemvTile::PAIR_MMA_LINEAR.problem(&pair), None);
        assert_eq!(GemvTile::SINGLE_MMA_LINEAR.problem(&single), None);
        // The pair: 64 columns a warp, 6 k-groups; the single matmul: 32
        // columns a warp, 16 k-groups.
        assert_eq!(GemvTile::PAIR_MMA_LINEAR.threads(2), 384);
        assert_eq!(GemvTile::SINGLE_MMA_LINEAR.warp_columns(), 32);
        assert_eq!(GemvTile::SINGLE_MMA_LINEAR.threads(1), 512);
    }
}
