//! The all-reduce fused with its element-wise epilogue and a row statistic
//! (`symm_mem.all_reduce_rows_out`: residual add, then RMSNorm). A block
//! handles whole rows, so the statistic is one block reduction per row and
//! the row never leaves registers between its reduction across ranks and
//! its normalization. Extra arguments after the epilogue's operands:
//! `rows_out`, the row operands, the statistic's initial value (f32); the
//! count is the number of rows.
//!
//! - One-shot (staged through the pool's slots, or between two barriers):
//!   block b reduces rows b, b + grid, ... from every rank's copy.
//! - With a split-K matmul prologue (one-shots only), a rank's data is the
//!   sum of its f32 slices (`Kernel::own`): summed where the staged and
//!   Lamport kernels send it, and by the barrier kernel into its own input,
//!   row by row as it will be read, before the first barrier.
//! - Lamport one-shot (bf16/f16 sums of at most as many rows as there are
//!   channels, so block b always takes row b): each thread sends its
//!   vectors of the row into every rank's Lamport area, then reduces the
//!   row from its own area as the vectors arrive (`lamport.rs`).
//! - Two-shot (pushing into the inputs): each rank reduces its chunk of
//!   rows, stores each reduced row into every rank's input, meets its
//!   peers, then runs every row from its own input through the epilogue
//!   and the statistic. Rows are given to blocks the same way on every
//!   rank, so each block's barrier orders the rows it reads after the
//!   peers' blocks that wrote them.

use super::{Algorithm, Kernel, THREADS};
use crate::PassError;
use crate::analysis::all_reduce::{RowsEpilogue, Scalar};
use crate::collectives::emit::Emitter;
use crate::collectives::emit::Val;
use melior::{dialect::arith::CmpiPredicate, ir::Type};

/// The element types a rows kernel works with, resolved once.
pub(super) struct RowTypes<'c> {
    spec: RowsEpilogue,
    out_element: Type<'c>,
    operands: Vec<Type<'c>>,
}

impl<'c> RowTypes<'c> {
    pub(super) fn new(e: &Emitter<'c>, spec: &RowsEpilogue) -> Result<Self, PassError> {
        let float = |scalar: Scalar| {
            e.float(scalar)
                .ok_or_else(|| format!("no row epilogue of element type {scalar}"))
        };
        Ok(Self {
            spec: spec.clone(),
            out_element: float(spec.out_element)?,
            operands: spec
                .operands
                .iter()
                .map(|operand| float(operand.element))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// One of a thread's vectors of a row: its index in the row, and whether
/// the row has it (`None`: always, known when the kernel is built).
struct Held<'c> {
    v: Val<'c>,
    inside: Option<Val<'c>>,
}

/// A rows kernel's arguments after the epilogue's.
struct RowArgs<'c> {
    rows_out: Val<'c>,
    operands: Vec<Val<'c>>,
    init: Val<'c>,
}

impl<'c> Kernel<'_, 'c> {
    pub(super) fn rows_body(&self, types: &RowTypes<'c>) {
        let e = self.e;
        // After the pool, input, out, the row count, the split-K partials
        // (if any) and the epilogue's operands.
        let first = 4 + usize::from(self.partials.is_some()) + self.epilogue_args.len();
        let count = types.spec.operands.len();
        let args = RowArgs {
            rows_out: e.arg(first),
            operands: (0..count).map(|i| e.arg(first + 1 + i)).collect(),
            init: e.arg(first + 1 + count),
        };
        let row_vectors = (types.spec.columns / self.spec.vector) as i64;
        let held = self.held(row_vectors);
        let rows = self.count;
        let zero = e.c64(0);
        let fused =
            |e: &Emitter<'c>, base: Val<'c>, value: &dyn Fn(&Emitter<'c>, Val<'c>) -> Val<'c>| {
                self.fused_row(e, types, &args, &held, base, value)
            };
        match self.spec.algorithm {
            Algorithm::OneShot if self.spec.lamport => {
                let lamport = self.lamport_call();
                self.over_rows(e, zero, rows, row_vectors, |e, base| {
                    self.over_held(e, &held, base, |e, at| self.lamport_send(e, &lamport, at));
                    fused(e, base, &|e, at| self.lamport_reduce(e, &lamport, at))
                });
                self.lamport_end(&lamport);
            }
            Algorithm::OneShot if self.spec.staged => {
                let staging = self.staging();
                self.store_own_rows(&held, rows, row_vectors, staging.mine);
                self.meet_counters(&staging);
                self.over_rows(e, zero, rows, row_vectors, |e, base| {
                    fused(e, base, &|e, at| {
                        let terms = self.load_terms(e, &staging.slots, at);
                        self.combine(e, terms)
                    })
                });
                self.end_staged(&staging);
            }
            Algorithm::OneShot => {
                if self.partials.is_some() {
                    // The slices' sum into this rank's input, which peers
                    // read after the barrier: the rows of this block at
                    // every rank.
                    self.store_own_rows(&held, rows, row_vectors, self.input);
                }
                e.barrier(self.pool, self.channel);
                self.over_rows(e, zero, rows, row_vectors, |e, base| {
                    fused(e, base, &|e, at| {
                        let terms = self.load_terms(e, &self.sources, at);
                        self.combine(e, terms)
                    })
                });
                e.barrier(self.pool, self.channel);
            }
            Algorithm::TwoShot => {
                let world = self.spec.world as i64;
                let chunk = e.div(e.add(rows, e.c64(world - 1)), e.c64(world));
                let bounds = |e: &Emitter<'c>, c: Val<'c>| {
                    let lo = e.mul(c, chunk);
                    (lo, e.min(e.add(lo, chunk), rows))
                };
                e.barrier(self.pool, self.channel);
                let (lo, hi) = bounds(e, self.rank);
                self.over_rows(e, lo, hi, row_vectors, |e, base| {
                    self.over_held(e, &held, base, |e, at| {
                        let terms = self.load_terms(e, &self.sources, at);
                        let reduced = self.combine(e, terms);
                        for target in &self.sources {
                            self.store_raw(e, reduced, *target, at);
                        }
                    });
                });
                e.barrier(self.pool, self.channel);
                for c in 0..world {
                    let (lo, hi) = bounds(e, e.c64(c));
                    self.over_rows(e, lo, hi, row_vectors, |e, base| {
                        fused(e, base, &|e, at| self.load(e, self.input, at))
                    });
                }
            }
        }
    }

    /// This rank's data (`own`: with split-K, the slices' sum) of the rows
    /// of this block, this thread's vectors of each, into `target`.
    fn store_own_rows(&self, held: &[Held], rows: Val<'c>, row_vectors: i64, target: Val<'c>) {
        let e = self.e;
        self.over_rows(e, e.c64(0), rows, row_vectors, |e, base| {
            self.over_held(e, held, base, |e, at| {
                let v = self.own(e, at);
                self.store_raw(e, v, target, at);
            });
        });
    }

    /// This thread's vectors of a row of `row_vectors` (at most two per
    /// thread: `ROW_BYTES_MAX`).
    fn held(&self, row_vectors: i64) -> Vec<Held<'c>> {
        let e = self.e;
        let threads = THREADS as i64;
        (0..(row_vectors + threads - 1) / threads)
            .map(|k| {
                let v = e.add(self.tid, e.c64(k * threads));
                let inside = ((k + 1) * threads > row_vectors)
                    .then(|| e.cmp(CmpiPredicate::Slt, v, e.c64(row_vectors)));
                Held { v, inside }
            })
            .collect()
    }

    /// Rows `lo + block, lo + block + grid, ...` below `hi`: `body` gets
    /// each row's first vector index.
    fn over_rows(
        &self,
        e: &Emitter<'c>,
        lo: Val<'c>,
        hi: Val<'c>,
        row_vectors: i64,
        body: impl Fn(&Emitter<'c>, Val<'c>),
    ) {
        let grid = e.cast(e.grid_dim(), e.i64());
        let first = e.add(lo, e.cast(self.channel, e.i64()));
        e.for_range(first, hi, grid, |e, row| {
            body(e, e.mul(row, e.c64(row_vectors)))
        });
    }

    /// `body(at)` for each of this thread's vectors of the row at `base`.
    fn over_held(
        &self,
        e: &Emitter<'c>,
        held: &[Held<'c>],
        base: Val<'c>,
        body: impl Fn(&Emitter<'c>, Val<'c>),
    ) {
        for h in held {
            let at = e.add(base, h.v);
            match h.inside {
                Some(inside) => e.when(inside, |e| body(e, at)),
                None => body(e, at),
            }
        }
    }

    /// One row: each held vector reduced (`value`), through the epilogue
    /// into `out` and folded by `step`; the block's total; then `apply`
    /// into `rows_out`. The block meets at the end, before the next row's
    /// reduction reuses its workgroup memory.
    fn fused_row(
        &self,
        e: &Emitter<'c>,
        types: &RowTypes<'c>,
        args: &RowArgs<'c>,
        held: &[Held<'c>],
        base: Val<'c>,
        value: &dyn Fn(&Emitter<'c>, Val<'c>) -> Val<'c>,
    ) {
        let narrow = self.vector(self.element);
        let f32 = Type::float32(e.ctx);
        let lanes = self.spec.vector;
        let out_align = self.align(self.spec.element);
        let epilogue = |e: &Emitter<'c>, at: Val<'c>| {
            // The epilogue's operands (a residual) load before the
            // exchange, so that they are not waited for after it.
            let operands = self.epilogue_operands(e, at);
            let reduced = value(e, at);
            let y = self.apply_epilogue(e, reduced, &operands);
            e.store(y, e.gep(self.out, at, narrow), out_align);
            y
        };
        let fold = |e: &Emitter<'c>, y: Val<'c>| {
            (0..lanes).fold(e.cf32(0.0), |acc, lane| {
                e.call(&types.spec.step, &[e.extract(y, lane), acc], f32)
            })
        };
        // Each held vector's index in the tensors.
        let ats: Vec<Val<'c>> = held.iter().map(|h| e.add(base, h.v)).collect();
        let mut ys = Vec::new();
        let mut partial = e.cf32(0.0);
        for (h, &at) in held.iter().zip(&ats) {
            let (y, acc) = match h.inside {
                None => {
                    let y = epilogue(e, at);
                    (y, fold(e, y))
                }
                Some(inside) => {
                    let y = e.choose(inside, narrow, |e| epilogue(e, at), |e| e.zero(narrow));
                    let acc = e.choose(inside, f32, |e| fold(e, y), |e| e.cf32(0.0));
                    (y, acc)
                }
            };
            partial = e.addf(partial, acc);
            ys.push(y);
        }
        // The row operands' vectors, loaded before the block sum hides
        // their latency.
        let operands: Vec<Vec<Val<'c>>> = held
            .iter()
            .zip(&ats)
            .map(|(h, &at)| {
                types
                    .spec
                    .operands
                    .iter()
                    .zip(&types.operands)
                    .zip(&args.operands)
                    .map(|((operand, ty), ptr)| {
                        let ty = self.vector(*ty);
                        let position = if operand.broadcast_row_vectors.is_some() {
                            h.v
                        } else {
                            at
                        };
                        let align = self.align(operand.element);
                        let load = |e: &Emitter<'c>| e.load(e.gep(*ptr, position, ty), ty, align);
                        match h.inside {
                            None => load(e),
                            Some(inside) => e.choose(inside, ty, load, |e| e.zero(ty)),
                        }
                    })
                    .collect()
            })
            .collect();
        let total = e.addf(args.init, e.block_sum(partial));
        let wide = self.vector(types.out_element);
        let rows_align = self.spec.vector * types.spec.out_element.bytes().unwrap_or(1);
        for (((h, at), y), loaded) in held.iter().zip(ats).zip(ys).zip(operands) {
            let write = |e: &Emitter<'c>| {
                let mut result = e.poison(wide);
                for lane in 0..lanes {
                    let mut call_args = vec![e.extract(y, lane), total];
                    call_args.extend(loaded.iter().map(|v| e.extract(*v, lane)));
                    let r = e.call(&types.spec.apply, &call_args, types.out_element);
                    result = e.insert(result, r, lane);
                }
                e.store(result, e.gep(args.rows_out, at, wide), rows_align);
            };
            match h.inside {
                None => write(e),
                Some(inside) => e.when(inside, write),
            }
        }
        e.sync_threads();
    }
}
