//! The GEMV kernels' IR: the kernel function (`SkinnyMatmul::build_gemv`),
//! the CUDA-core GEMV, and what the other engines share (weight pieces,
//! the rows of `a` prepared in shared memory, the output stage).

use super::tile::{Engine, GemvTile, HELD_VECTORS, MMA_COLUMNS, PIECE};
use crate::PassError;
use crate::collectives::emit::Emitter;
use crate::collectives::emit::{Blk, Val};
use crate::ir::melior_ext::OperationExt;
use crate::ir::scalar::Scalar;
use crate::matmul::kernel::{RowScaleFunctions, SkinnyMatmul};
use crate::matmul::tensor_core::TensorCore;
use melior::dialect::{arith::CmpiPredicate, ods};
use melior::ir::attribute::DenseI32ArrayAttribute;

impl SkinnyMatmul {
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
        let kernel = e.kernel(
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
        if tile.cluster > 1 {
            // `.reqnctapercluster`: the blocks that share `a` run as one
            // cluster, side by side along the grid's x.
            let dims = DenseI32ArrayAttribute::new(e.ctx, &[tile.cluster as i32, 1, 1]);
            kernel.set_attribute_to("nvvm.cluster_dim", dims.into());
        }
        Ok(())
    }
}

/// What a thread of a CUDA-core GEMV works on: its piece of 8 columns of
/// the block's (the second weight's after the first's) and its k-group,
/// the block's first column `n0` and the piece's first `column` (of its
/// weight), the call's rows `m`, `a` and `out` at the block's slice, the
/// piece's weight, and the shared memory's rows of `a`, k-group sums and
/// row statistics.
pub(in crate::matmul) struct CoreThread<'c> {
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
pub(in crate::matmul) struct Operands<'c> {
    /// The call's rows (i64).
    pub m: Val<'c>,
    pub a: Val<'c>,
    pub out: Val<'c>,
    pub weights: Vec<Val<'c>>,
}

pub(in crate::matmul) struct Gemv<'a, 'c> {
    pub(in crate::matmul) k: &'a SkinnyMatmul,
    pub(in crate::matmul) tile: GemvTile,
    pub(in crate::matmul) e: &'a Emitter<'c>,
}

impl<'c> Gemv<'_, 'c> {
    pub(in crate::matmul) fn c(&self, number: u64) -> Val<'c> {
        self.e.c64(number as i64)
    }

    /// The 16-byte piece of `weight` at `(row, column)`, streamed past L1.
    /// With an `exact` tiling every column is inside and a row past K
    /// (loads one step ahead of the last) is clamped to the last row, its
    /// piece never used; otherwise a piece past K or N reads as zero.
    pub(in crate::matmul) fn weight_piece(
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
    pub(in crate::matmul) fn prefetch(&self) -> u64 {
        self.k.gemv_prefetch(self.tile)
    }

    /// Prefetches into L2 the lines of the first `self.prefetch()` weight
    /// rows (at most K) at `column` (clamped inside the weight) of every
    /// weight, the rows dealt round the block's threads: thread `tid`
    /// takes rows `tid`, `tid + threads`, ... (each a line; a thread past
    /// the last row takes it again). For the GEMVs whose weight the TMA
    /// streams; no value depends on the prefetches.
    pub(in crate::matmul) fn prefetch_rows(
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
    pub(in crate::matmul) fn prefetch_weight(
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
    pub(in crate::matmul) fn operands(&self) -> Operands<'c> {
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
    pub(in crate::matmul) fn weight_of(&self, weights: &[Val<'c>], which: Val<'c>) -> Val<'c> {
        let e = self.e;
        if weights.len() == 1 {
            return weights[0];
        }
        let second = e.cmp(CmpiPredicate::Ne, which, self.c(0));
        e.select(second, weights[1], weights[0])
    }

    /// A CUDA-core GEMV thread's `CoreThread`, for its `piece` and k-group
    /// `group` (i64 values, however the kernel maps threads to them).
    pub(in crate::matmul) fn core_thread(&self, piece: Val<'c>, group: Val<'c>) -> CoreThread<'c> {
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
    pub(in crate::matmul) fn let_next_grid_launch(&self) {
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
    pub(in crate::matmul) fn prepare_rows(
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
    pub(in crate::matmul) fn row_scale(&self) -> Option<&RowScaleFunctions> {
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
    pub(in crate::matmul) fn prologue_parameters(&self) -> (Option<Val<'c>>, Vec<Val<'c>>) {
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

    pub(in crate::matmul) fn shared_f32(
        &self,
        e: &Emitter<'c>,
        base: Val<'c>,
        index: Val<'c>,
    ) -> Val<'c> {
        e.load(e.byte_offset(base, e.mul(index, self.c(4))), e.f32(), 4)
    }

    /// After a CUDA-core GEMV thread's loop: the next grid may launch, the
    /// k-groups' sums meet in shared memory (the thread's `acc`, each
    /// row's statistic reduced from the `partials` `prepare_rows` left with
    /// `row_scale`), and each thread then writes whole elements of the
    /// block's columns, row by row.
    pub(in crate::matmul) fn finish(&self, t: &CoreThread<'c>, acc: Val<'c>, partials: &[Val<'c>]) {
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
    pub(in crate::matmul) fn sum_slot(
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
    pub(in crate::matmul) fn write_out(
        &self,
        m: Val<'c>,
        out: Val<'c>,
        n0: Val<'c>,
        sums: Val<'c>,
    ) {
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
                        let statistic = if self.sums_statistics_in_loop() {
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
pub(in crate::matmul) fn row_piece<'c>(
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
