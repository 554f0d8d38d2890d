//! The streaming kernel for a single row of `a` (decode at one token): the
//! same matmul as `kernel` (`out = a @ w`, or a pair's
//! `epilogue(a @ w0, a @ w1)` with the row-norm prologue), as a GEMV on
//! the CUDA cores instead of the tensor cores.
//!
//! At one row the tensor-core kernel wastes 15 of its 16 rows and stages
//! the weight through shared memory. Here each thread streams 16-byte
//! pieces of the weight straight into registers, `unroll` loads in flight,
//! and multiplies them by the row of `a`, which the block keeps in shared
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

use super::kernel::{Arg, Output, SkinnyMatmul};
use super::tensor_core::TensorCore;
use crate::PassError;
use crate::collectives::emit::{Emitter, value};
use crate::ir::scalar::Scalar;
use crate::ir::{Blk, Val};
use melior::dialect::{arith::CmpiPredicate, ods};

/// Elements of bf16 in a 16-byte piece.
const PIECE: u64 = 8;

/// The GEMV's tiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GemvTile {
    /// Columns of each weight per block (a multiple of 8).
    pub columns: u64,
    /// Threads that split each column piece's K range.
    pub k_groups: u64,
    /// Loads in flight per thread.
    pub unroll: u64,
}

impl GemvTile {
    /// The pair's and the single matmul's tilings: the fastest of a sweep
    /// of the generated kernels at the TP-2 Llama-3-8B shapes on one H200
    /// (bench/results/2026-11-26-gemv-h200.md).
    pub const PAIR: GemvTile = GemvTile {
        columns: 64,
        k_groups: 64,
        unroll: 4,
    };
    pub const SINGLE: GemvTile = GemvTile {
        columns: 64,
        k_groups: 64,
        unroll: 2,
    };
    /// Rows of `a` the kernel takes.
    pub const ROWS: u64 = 1;

    fn pieces(&self, weights: u64) -> u64 {
        weights * self.columns / PIECE
    }
    pub fn threads(&self, weights: u64) -> u64 {
        self.pieces(weights) * self.k_groups
    }
    /// Shared memory: the row of `a` (f32), the k-groups' sums, the row
    /// statistic.
    pub fn shared_bytes(&self, k: u64, weights: u64) -> u64 {
        Self::ROWS * k * 4 + self.k_groups * Self::ROWS * weights * self.columns * 4 + 4
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
        if self.k_groups == 0 || self.unroll == 0 {
            return Some("a GEMV needs k-groups and loads in flight".into());
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
    pub fn problem(&self, k: u64, weights: u64) -> Option<String> {
        if let Some(problem) = self.tiling_problem(weights) {
            return Some(problem);
        }
        if self.shared_bytes(k, weights) > super::kernel::MAX_SHARED {
            return Some(format!(
                "a row of K = {k} does not fit in shared memory as f32"
            ));
        }
        None
    }
}

impl SkinnyMatmul {
    /// The GEMV kernel's name.
    pub fn gemv_name(&self) -> String {
        format!("{}_gemv", self.name)
    }

    /// Blocks of the GEMV along x (column tiles) and y (slices).
    pub fn gemv_grid(&self, tile: GemvTile) -> (u64, u64) {
        (self.n.div_ceil(tile.columns), self.slices)
    }

    /// Appends the GEMV kernel (same parameters as the tensor-core
    /// kernel's) to `module`.
    pub fn build_gemv(&self, e: &Emitter, module: Blk, tile: GemvTile) -> Result<(), PassError> {
        if let Some(problem) = self
            .problem()
            .or_else(|| tile.problem(self.k, self.weights))
        {
            return Err(PassError::Build(format!(
                "no GEMV kernel for this matmul: {problem}"
            )));
        }
        let parameters = self.parameters(e);
        e.kernel(
            module,
            &self.gemv_name(),
            &parameters,
            (
                tile.threads(self.weights),
                symm_protocol::TWO_SHOT_MAX_BLOCKS as u64,
            ),
            |body| {
                Gemv {
                    k: self,
                    tile,
                    e: body,
                }
                .emit()
            },
        );
        Ok(())
    }
}

struct Gemv<'a, 'c> {
    k: &'a SkinnyMatmul,
    tile: GemvTile,
    e: &'a Emitter<'c>,
}

impl Gemv<'_, '_> {
    fn c(&self, number: u64) -> Val {
        self.e.c64(number as i64)
    }

    fn emit(&self) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let arg = |i: usize| e.block.arg(i);
        let weights = k.weights as usize;
        let i64 = e.i64();
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let f32 = e.f32();
        let pieces = tile.pieces(k.weights);
        let per_weight = tile.columns / PIECE;
        let threads = tile.threads(k.weights);
        let tid = e.cast(e.thread_id(), i64);
        let piece = e.rem(tid, self.c(pieces));
        let group = e.div(tid, self.c(pieces));
        let which = e.div(piece, self.c(per_weight));
        let n0 = e.mul(e.cast(e.block_id(), i64), self.c(tile.columns));
        let column = e.add(n0, e.mul(e.rem(piece, self.c(per_weight)), self.c(PIECE)));
        let slice = e.cast(e.block_id_y(), i64);
        let m = arg(2 + weights);
        let a = e.gep(arg(0), e.mul(slice, self.c(k.a_slice)), e.int_type(16));
        let weight_of =
            |j: usize| e.gep(arg(1 + j), e.mul(slice, self.c(k.w_slice)), e.int_type(16));
        let weight = if weights == 1 {
            weight_of(0)
        } else {
            let second = e.cmp(CmpiPredicate::Ne, which, self.c(0));
            e.select(second, weight_of(1), weight_of(0))
        };
        let out_slice = e.mul(e.mul(slice, m), self.c(k.n * k.output.bytes()));
        let out = e.gep(arg(1 + weights), out_slice, e.int_type(8));
        let shared = e.dynamic_shared();
        let row_of_a = shared;
        let sums = e.byte_offset(shared, self.c(GemvTile::ROWS * k.k * 4));
        let statistic = e.byte_offset(
            sums,
            self.c(tile.k_groups * GemvTile::ROWS * k.weights * tile.columns * 4),
        );

        // Row i of this thread is i * k_groups + group; a thread has
        // `per_thread` of them, consumed `unroll` at a time.
        let per_thread = k.k.div_ceil(tile.k_groups);
        let iterations = per_thread.div_ceil(tile.unroll);
        let exact =
            k.k.is_multiple_of(tile.k_groups * tile.unroll) && k.n.is_multiple_of(tile.columns);
        let piece_ty = e.vector(PIECE, bf16);
        // The piece of row `i` (zero past K and N).
        let load_piece = |e: &Emitter, i: Val| -> Val {
            let row = e.add(e.mul(i, self.c(tile.k_groups)), group);
            if exact {
                // Past the last iteration a load is clamped to the last
                // row and never used.
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
        };
        // The first loads are in flight while the row of `a` is prepared.
        let first: Vec<Val> = (0..tile.unroll).map(|u| load_piece(e, self.c(u))).collect();
        self.prepare_row(m, a, row_of_a, statistic, threads);

        let accumulators = GemvTile::ROWS * PIECE;
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
                    let a_value = if exact {
                        self.shared_f32(e, row_of_a, row)
                    } else {
                        let inside = e.cmp(CmpiPredicate::Ult, row, self.c(k.k));
                        let clamped = e.min(row, self.c(k.k - 1));
                        let v = self.shared_f32(e, row_of_a, clamped);
                        e.select(inside, v, e.cf32(0.0))
                    };
                    let wide = e.extf(piece, e.vector(PIECE, f32));
                    for lane in 0..PIECE {
                        let w = e.extract(wide, lane);
                        let sum = e.one(
                            ods::math::fma(
                                e.ctx,
                                value(a_value),
                                value(w),
                                value(e.extract(acc, lane)),
                                e.loc,
                            )
                            .into(),
                        );
                        acc = e.insert(acc, sum, lane);
                    }
                }
                let mut out = vec![acc];
                out.extend(next);
                out
            },
        );
        self.finish(m, out, n0, piece, group, sums, carried[0]);
    }

    /// `a`'s row in shared memory as f32: through the prologue (its row
    /// statistic reduced by the block first) when there is one.
    fn prepare_row(&self, m: Val, a: Val, row_of_a: Val, statistic: Val, threads: u64) {
        let (e, k) = (self.e, self.k);
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let f32 = e.f32();
        let tid = e.cast(e.thread_id(), e.i64());
        let present = e.cmp(CmpiPredicate::Ult, self.c(0), m);
        // The kernel's parameters (closures below get their own blocks).
        let init = k
            .prologue
            .as_ref()
            .map(|_| e.block.arg(3 + k.weights as usize));
        let column_operands: Vec<Val> = k.prologue.as_ref().map_or(Vec::new(), |p| {
            (0..p.columns.len())
                .map(|i| e.block.arg(4 + k.weights as usize + i))
                .collect()
        });
        let statistic_value = k.prologue.as_ref().zip(init).map(|(prologue, init)| {
            let vectors = e.select(present, self.c(k.k / PIECE), self.c(0));
            let partial =
                e.for_range_carrying(tid, vectors, self.c(threads), e.cf32(0.0), |e, v, acc| {
                    let at = e.mul(v, self.c(PIECE));
                    let vector = e.load(e.gep(a, at, bf16), e.vector(PIECE, bf16), 16);
                    let mut acc = acc;
                    for lane in 0..PIECE {
                        let x = e.extract(vector, lane);
                        acc = e.call(&prologue.step, &[x, acc], f32);
                    }
                    acc
                });
            let total = e.block_sum(partial);
            let value = e.addf(init, total);
            let first = e.cmp(CmpiPredicate::Eq, tid, self.c(0));
            e.when(first, |e| e.store(value, statistic, 4));
            e.sync_threads();
            e.load(statistic, f32, 4)
        });
        let elements = e.select(present, self.c(k.k), self.c(0));
        e.for_range(tid, elements, self.c(threads), |e, index| {
            let x = e.load(e.gep(a, index, bf16), bf16, 2);
            let element = match (&k.prologue, statistic_value) {
                (Some(prologue), Some(statistic)) => {
                    let args = prologue
                        .args
                        .iter()
                        .map(|arg| match arg {
                            Arg::Product(_) => x,
                            Arg::Statistic => statistic,
                            Arg::Column(i) => {
                                let scalar = prologue.columns[*i];
                                let ty = e.float(scalar).expect("checked");
                                let operand = column_operands[*i];
                                let align = if scalar == Scalar::F32 { 4 } else { 2 };
                                e.load(e.gep(operand, index, ty), ty, align)
                            }
                            Arg::Unused(ty) => e.zero(e.float(*ty).expect("checked")),
                        })
                        .collect::<Vec<_>>();
                    e.call(&prologue.apply, &args, bf16)
                }
                _ => x,
            };
            let at = e.byte_offset(row_of_a, e.mul(index, self.c(4)));
            e.store(e.extf(element, f32), at, 4);
        });
        e.sync_threads();
    }

    fn shared_f32(&self, e: &Emitter, base: Val, index: Val) -> Val {
        e.load(e.byte_offset(base, e.mul(index, self.c(4))), e.f32(), 4)
    }

    /// The k-groups' sums meet in shared memory; each thread then writes
    /// whole elements of the block's columns.
    #[allow(clippy::too_many_arguments)]
    fn finish(&self, m: Val, out: Val, n0: Val, piece: Val, group: Val, sums: Val, acc: Val) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let f32 = e.f32();
        let width = k.weights * tile.columns;
        let slot = |e: &Emitter, group: Val, column: Val| {
            let at = e.add(e.mul(group, self.c(width)), column);
            e.byte_offset(sums, e.mul(at, self.c(4)))
        };
        for lane in 0..PIECE {
            let column = e.add(e.mul(piece, self.c(PIECE)), self.c(lane));
            e.store(e.extract(acc, lane), slot(e, group, column), 4);
        }
        e.sync_threads();
        let tid = e.cast(e.thread_id(), e.i64());
        let threads = self.c(tile.threads(k.weights));
        e.for_range(tid, self.c(tile.columns), threads, |e, column| {
            let inside = e.and(
                e.cmp(CmpiPredicate::Ult, self.c(0), m),
                e.cmp(CmpiPredicate::Ult, e.add(n0, column), self.c(k.n)),
            );
            e.when(inside, |e| {
                let products: Vec<Val> = (0..k.weights)
                    .map(|j| {
                        let column = e.add(column, self.c(j * tile.columns));
                        let mut sum = e.load(slot(e, self.c(0), column), f32, 4);
                        for g in 1..tile.k_groups {
                            sum = e.addf(sum, e.load(slot(e, self.c(g), column), f32, 4));
                        }
                        sum
                    })
                    .collect();
                let bf16 = e.float(Scalar::Bf16).expect("bf16");
                let result = match (&k.epilogue, k.output) {
                    (Some(epilogue), _) => {
                        let rounded: Vec<Val> =
                            products.iter().map(|p| e.truncf(*p, bf16)).collect();
                        let args = epilogue
                            .args
                            .iter()
                            .map(|arg| match arg {
                                Arg::Product(i) => rounded[*i],
                                Arg::Unused(ty) => e.zero(e.float(*ty).expect("checked")),
                                Arg::Statistic | Arg::Column(_) => rounded[0],
                            })
                            .collect::<Vec<_>>();
                        e.call(&epilogue.function, &args, bf16)
                    }
                    (None, Output::Bf16) => e.truncf(products[0], bf16),
                    (None, Output::F32) => products[0],
                };
                let bytes = k.output.bytes();
                let at = e.mul(e.add(n0, column), self.c(bytes));
                e.store(result, e.byte_offset(out, at), bytes);
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_tilings_fit_llama_shapes() {
        assert_eq!(GemvTile::PAIR.problem(4096, 2), None);
        assert_eq!(GemvTile::SINGLE.problem(3584, 1), None);
        assert_eq!(GemvTile::PAIR.threads(2), 1024);
        assert_eq!(GemvTile::SINGLE.threads(1), 512);
    }

    #[test]
    fn tilings_that_cannot_run_are_refused() {
        let odd = GemvTile {
            columns: 12,
            ..GemvTile::PAIR
        };
        assert!(odd.problem(4096, 2).unwrap().contains("multiple of 8"));
        assert!(odd.tiling_problem(1).is_some());
        let wide = GemvTile {
            k_groups: 256,
            ..GemvTile::PAIR
        };
        assert!(wide.problem(4096, 2).unwrap().contains("at most 1024"));
        assert!(
            GemvTile::SINGLE
                .problem(1 << 20, 1)
                .unwrap()
                .contains("shared memory")
        );
    }
}
