//! The CUDA-core GEMV for weights stored n x k (nn.Linear's layout, read
//! through the maps `(m, k)`, `(n, k)`, `(m, n)`;
//! `SkinnyMatmul::weight_transposed`): the same kernel as `gemv`'s (the
//! rows of `a` staged in shared memory as f32 through the prologue, the
//! k-groups' sums meeting in shared memory, the output written through the
//! epilogue), with the weight read along its rows.
//!
//! A column of the product is a row of the weight, contiguous over K. A
//! thread still owns a piece of 8 columns and a k-group; here the k-group
//! is the thread's index within its piece (so the 32 lanes of a warp share
//! the piece), and its K range is the 8-element pieces g, g + k_groups,
//! ... of each of its 8 weight rows: at each step the warp reads 512
//! contiguous bytes of each row. A step's 8 loads (one per column) stay
//! in flight `unroll` steps ahead; each multiplies 8 elements of each row
//! of `a` into its column's sum.

use super::gemv::{Gemv, LINE_ELEMENTS, PIECE};
use super::tensor_core::TensorCore;
use crate::collectives::emit::{Emitter, Val};
use crate::ir::scalar::Scalar;
use melior::dialect::{arith::CmpiPredicate, ods};

impl<'c> Gemv<'_, 'c> {
    /// The first element of K of k-group `group`'s piece at `step`:
    /// piece `step * k_groups + group` of 8.
    fn linear_first(&self, e: &Emitter<'c>, step: Val<'c>, group: Val<'c>) -> Val<'c> {
        e.mul(
            e.add(e.mul(step, self.c(self.tile.k_groups)), group),
            self.c(PIECE),
        )
    }

    /// The 16-byte piece of weight row `row` (a column of the product) at
    /// element `first` of K, streamed past L1. With an `exact` tiling the
    /// row is inside and a piece past K (a load one step ahead of the last)
    /// is clamped to the last piece, never used; otherwise a piece past K
    /// or a row past N reads as zero.
    pub(super) fn linear_piece(
        &self,
        e: &Emitter<'c>,
        weight: Val<'c>,
        (row, first): (Val<'c>, Val<'c>),
        exact: bool,
    ) -> Val<'c> {
        let k = self.k;
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let piece_ty = e.vector(PIECE, bf16);
        let load = |e: &Emitter<'c>, at: Val<'c>| {
            let element = e.add(e.mul(row, self.c(k.k)), at);
            e.load_streaming_16(e.gep(weight, element, bf16), piece_ty)
        };
        if exact {
            return load(e, e.min(first, self.c(k.k - PIECE)));
        }
        let inside = e.and(
            e.cmp(CmpiPredicate::Ult, first, self.c(k.k)),
            e.cmp(CmpiPredicate::Ult, row, self.c(k.n)),
        );
        e.choose(inside, piece_ty, |e| load(e, first), |e| e.zero(piece_ty))
    }

    /// Prefetches into L2 the line of weight row `row` (a column of the
    /// product) that holds element `first` of K, both clamped into the
    /// weight.
    pub(super) fn prefetch_linear(
        &self,
        e: &Emitter<'c>,
        weight: Val<'c>,
        (row, first): (Val<'c>, Val<'c>),
    ) {
        let k = self.k;
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let row = e.min(row, self.c(k.n - 1));
        let first = e.min(first, self.c(k.k - 1));
        let element = e.add(e.mul(row, self.c(k.k)), first);
        e.prefetch_l2(e.gep(weight, element, bf16));
    }

    /// The loads of one step: piece `(step * k_groups + group)` of K in
    /// each of the 8 weight rows from `column` (`linear_piece`).
    fn linear_step(
        &self,
        e: &Emitter<'c>,
        weight: Val<'c>,
        (step, group, column): (Val<'c>, Val<'c>, Val<'c>),
        exact: bool,
    ) -> Vec<Val<'c>> {
        let first = self.linear_first(e, step, group);
        (0..PIECE)
            .map(|i| self.linear_piece(e, weight, (e.add(column, self.c(i)), first), exact))
            .collect()
    }

    pub(super) fn emit_linear(&self) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let f32 = e.f32();
        let threads = tile.threads(k.weights);
        let tid = e.cast(e.thread_id(), e.i64());
        // The lanes of a warp are k-groups of one piece.
        let group = e.rem(tid, self.c(tile.k_groups));
        let t = self.core_thread(e.div(tid, self.c(tile.k_groups)), group);
        let (weight, column, row_of_a) = (t.weight, t.column, t.row_of_a);

        // The lines of the first `prefetch` steps towards L2, before the
        // wait for the grids before (no value depends on them). A step
        // reads k_groups pieces of each of the piece's 8 weight rows
        // (k_groups / 8 lines a row: `SkinnyMatmul::gemv_prefetch` asks
        // for a multiple of 8): thread `group` takes line group / 8 of
        // row group % 8.
        let (line_row, line) = (e.rem(group, self.c(PIECE)), e.div(group, self.c(PIECE)));
        for j in 0..self.prefetch() {
            let first = e.add(
                self.c(j * tile.k_groups * PIECE),
                e.mul(line, self.c(LINE_ELEMENTS)),
            );
            self.prefetch_linear(e, weight, (e.add(column, line_row), first));
        }

        // Steps of k_groups pieces of 8 along K, `unroll` at a time.
        let steps = k.k.div_ceil(tile.k_groups * PIECE);
        let iterations = steps.div_ceil(tile.unroll);
        let exact = k.k.is_multiple_of(tile.k_groups * PIECE * tile.unroll)
            && k.n.is_multiple_of(tile.columns);
        let step_loads = |e: &Emitter<'c>, step: Val<'c>| {
            self.linear_step(e, weight, (step, group, column), exact)
        };
        // The first loads are in flight while the rows of `a` are prepared.
        let mut inits = vec![e.zero(e.vector(tile.rows * PIECE, f32))];
        for u in 0..tile.unroll {
            inits.extend(step_loads(e, self.c(u)));
        }
        let partials = self.prepare_rows(t.m, t.a, row_of_a, t.statistics, threads);
        let carried = e.for_range_carrying_many(
            (self.c(0), self.c(iterations), self.c(1)),
            &inits,
            |e, iteration, carried| {
                let mut acc = carried[0];
                let mut next = Vec::with_capacity((tile.unroll * PIECE) as usize);
                for u in 0..tile.unroll {
                    let step = e.add(e.mul(iteration, self.c(tile.unroll)), self.c(u));
                    let loaded = &carried[1 + (u * PIECE) as usize..1 + ((u + 1) * PIECE) as usize];
                    next.extend(step_loads(e, e.add(step, self.c(tile.unroll))));
                    let first = self.linear_first(e, step, group);
                    // Past K (guarded path only) the piece of `a` reads as 0.
                    let (read, inside) = if exact {
                        (first, None)
                    } else {
                        let inside = e.cmp(CmpiPredicate::Ult, first, self.c(k.k));
                        (e.min(first, self.c(k.k - PIECE)), Some(inside))
                    };
                    let wide: Vec<Val<'c>> = loaded
                        .iter()
                        .map(|piece| e.extf(*piece, e.vector(PIECE, f32)))
                        .collect();
                    for r in 0..tile.rows {
                        let a_values: Vec<Val<'c>> = (0..PIECE)
                            .map(|l| {
                                let at = e.add(read, self.c(r * k.k + l));
                                let v = self.shared_f32(e, row_of_a, at);
                                match inside {
                                    Some(inside) => e.select(inside, v, e.cf32(0.0)),
                                    None => v,
                                }
                            })
                            .collect();
                        for (i, w) in wide.iter().enumerate() {
                            let at = r * PIECE + i as u64;
                            let mut sum = e.extract(acc, at);
                            for (l, a_value) in a_values.iter().enumerate() {
                                let w = e.extract(*w, l as u64);
                                sum = e.one(ods::math::fma(e.ctx, *a_value, w, sum, e.loc).into());
                            }
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
}
