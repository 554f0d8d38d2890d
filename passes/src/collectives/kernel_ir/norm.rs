//! The runtime library's RMSNorm kernels: the one-shot all-reduce of bf16
//! rows fused with RMSNorm (staged or between two barriers) and RMSNorm
//! alone, both over rows of any hidden size in 16-byte vectors.

use super::{Kernel, THREADS};
use crate::analysis::all_reduce::{Algorithm, AllReduceKernel, MAX_BLOCKS, Reduction, Scalar};
use crate::collectives::emit::Emitter;
use crate::collectives::emit::{Blk, Val};
use melior::{dialect::arith::CmpiPredicate, ir::Type};

/// Entry base of the one-shot all-reduce fused with RMSNorm.
pub const ALL_REDUCE_RMS_NORM: &str = "symm_all_reduce_rms_norm_bf16";
/// Entry of RMSNorm alone.
pub const RMS_NORM: &str = "symm_rms_norm_bf16";

/// The one-shot all-reduce of bf16 rows fused with RMSNorm, for `world`
/// ranks, staged or not: `out = rmsnorm(sum over ranks of input) * gamma`.
/// Parameters: the input's pool, input, out, rows, gamma, hidden size
/// (i64, a multiple of 8), epsilon (f32). Its name is the returned one.
pub fn build_all_reduce_rms_norm<'c>(
    e: &Emitter<'c>,
    module: Blk<'c>,
    world: u64,
    staged: bool,
) -> String {
    let spec = AllReduceKernel {
        algorithm: Algorithm::OneShot,
        reduction: Reduction::Sum,
        element: Scalar::Bf16,
        world,
        vector: NORM_VECTOR,
        epilogue: None,
        staged,
        lamport: false,
        push: None,
        tail: false,
        rows: None,
        split_k: None,
        matmul_sends: false,
    };
    let name = all_reduce_rms_norm_name(world, staged);
    let parameters = RmsNorm::parameters(e, &[e.pool(), e.ptr(), e.ptr(), e.i64()]);
    e.kernel(module, &name, &parameters, (THREADS, MAX_BLOCKS), |body| {
        let bf16 = Type::bfloat16(body.ctx);
        Kernel::new(&spec, body, bf16, Vec::new()).all_reduce_rms_norm()
    });
    name
}

/// The entry of `build_all_reduce_rms_norm`'s kernel.
pub fn all_reduce_rms_norm_name(world: u64, staged: bool) -> String {
    let staged = if staged { "_staged" } else { "" };
    format!("{ALL_REDUCE_RMS_NORM}{staged}_w{world}")
}

/// RMSNorm alone (after a separate all-reduce): parameters x, out, rows,
/// gamma, hidden size, epsilon.
pub fn build_rms_norm<'c>(e: &Emitter<'c>, module: Blk<'c>) {
    let parameters = RmsNorm::parameters(e, &[e.ptr(), e.ptr(), e.i64()]);
    e.kernel(
        module,
        RMS_NORM,
        &parameters,
        (THREADS, MAX_BLOCKS),
        |body| {
            let x = body.arg(0);
            let narrow = body.vector(NORM_VECTOR, Type::bfloat16(body.ctx));
            let norm = RmsNorm::from_args(body, 3);
            let setup = norm.setup(body, held_vectors(1));
            norm.rows(body, &setup, body.arg(2), body.arg(1), |e, at| {
                e.load(e.gep(x, at, narrow), narrow, 16)
            });
        },
    );
}

impl<'c> Kernel<'_, 'c> {
    /// The one-shot all-reduce of each row fused with RMSNorm (arguments 4
    /// to 6: gamma, hidden size, epsilon; the count is the rows). Staged or
    /// between two barriers, as the one-shots; a block reduces and
    /// normalizes whole rows, so its channel orders everything it reads.
    fn all_reduce_rms_norm(&self) {
        let e = self.e;
        let norm = RmsNorm::from_args(e, 4);
        let setup = norm.setup(e, held_vectors(self.spec.world));
        let rows = self.count;
        if !self.spec.staged {
            e.barrier(self.pool, self.channel);
            norm.rows(e, &setup, rows, self.out, |e, at| {
                let terms = self.load_terms(e, &self.sources, at);
                self.combine(e, terms)
            });
            return e.barrier(self.pool, self.channel);
        }
        let staging = self.staging();
        let row_vectors = norm.row_vectors(e);
        let grid = e.cast(e.grid_dim(), e.i64());
        let step = e.c64(THREADS as i64);
        e.for_range(e.cast(self.channel, e.i64()), rows, grid, |e, row| {
            let base = e.mul(row, row_vectors);
            e.for_range(self.tid, row_vectors, step, |e, v| {
                let at = e.add(base, v);
                let value = self.load(e, self.input, at);
                self.store_raw(e, value, staging.mine, at);
            });
        });
        self.meet_counters(&staging);
        norm.rows(e, &setup, rows, self.out, |e, at| {
            let terms = self.load_terms(e, &staging.slots, at);
            self.combine(e, terms)
        });
        self.end_staged(&staging);
    }
}

/// RMSNorm of bf16 rows, `x / sqrt(mean(x^2) + eps) * gamma` in f32, in
/// vectors of 8: its gamma, hidden size (i64) and epsilon (f32).
pub(super) struct RmsNorm<'c> {
    gamma: Val<'c>,
    hidden: Val<'c>,
    eps: Val<'c>,
}

/// bf16 elements of one 16-byte vector.
const NORM_VECTOR: u64 = 8;

impl<'c> RmsNorm<'c> {
    /// A kernel's parameters: `first`, then gamma, hidden size, epsilon.
    fn parameters(e: &Emitter<'c>, first: &[Type<'c>]) -> Vec<Type<'c>> {
        let mut parameters = first.to_vec();
        parameters.extend([e.ptr(), e.i64(), Type::float32(e.ctx)]);
        parameters
    }

    /// From the kernel's arguments `first..first + 3`.
    pub(super) fn from_args(e: &Emitter<'c>, first: usize) -> Self {
        Self {
            gamma: e.arg(first),
            hidden: e.arg(first + 1),
            eps: e.arg(first + 2),
        }
    }

    fn row_vectors(&self, e: &Emitter<'c>) -> Val<'c> {
        e.div(self.hidden, e.c64(NORM_VECTOR as i64))
    }

    /// What a thread computes once per kernel: which `held` vectors of a
    /// row it keeps in registers, and `1 / hidden`. Call it early, before
    /// any barrier, so that the division is off the path from the block
    /// sum to the result.
    pub(super) fn setup(&self, e: &Emitter<'c>, held: i64) -> NormSetup<'c> {
        let row_vectors = self.row_vectors(e);
        let tid = e.cast(e.thread_id(), e.i64());
        let held = (0..held)
            .map(|k| {
                let v = e.add(tid, e.c64(k * THREADS as i64));
                let inside = e.cmp(CmpiPredicate::Slt, v, row_vectors);
                Held { v, inside }
            })
            .collect();
        let f32 = Type::float32(e.ctx);
        let inverse_hidden = e.divf(e.cf32(1.0), e.uitofp(self.hidden, f32));
        NormSetup {
            held,
            inverse_hidden,
        }
    }

    /// Every row of this block (block b: rows b, b + grid, ...): vector v
    /// of the row is `value(e, global vector index)`, normalized into
    /// `out`. A thread keeps its held vectors in registers from the sum of
    /// squares to the normalization; the rest (rows longer than
    /// held vectors) it stores in `out` as they are and rereads.
    /// The block meets after each row, before the reduction's workgroup
    /// memory is reused.
    pub(super) fn rows(
        &self,
        e: &Emitter<'c>,
        setup: &NormSetup<'c>,
        rows: Val<'c>,
        out: Val<'c>,
        value: impl Fn(&Emitter<'c>, Val<'c>) -> Val<'c>,
    ) {
        let narrow = e.vector(NORM_VECTOR, Type::bfloat16(e.ctx));
        let row_vectors = self.row_vectors(e);
        let tid = e.cast(e.thread_id(), e.i64());
        let held = setup.held.len() as i64;
        let rest = e.add(tid, e.c64(held * THREADS as i64));
        let grid = e.cast(e.grid_dim(), e.i64());
        let step = e.c64(THREADS as i64);
        let first = e.cast(e.block_id(), e.i64());
        e.for_range(first, rows, grid, |e, row| {
            let base = e.mul(row, row_vectors);
            // Vectors a thread does not have are zeros: their squares add
            // nothing, so the sum is the same, bit for bit, as over its own.
            let xs: Vec<Val<'c>> = setup
                .held
                .iter()
                .map(|h| {
                    let x = |e: &Emitter<'c>| value(e, e.add(base, h.v));
                    e.choose(h.inside, narrow, x, |e| e.zero(narrow))
                })
                .collect();
            // Gamma's vectors, loaded before the block sum hides their
            // latency (per row: a loop-invariant copy would hold 8 more
            // registers through the kernel).
            let gammas: Vec<Val<'c>> = setup
                .held
                .iter()
                .map(|h| {
                    let g = |e: &Emitter<'c>| e.load(e.gep(self.gamma, h.v, narrow), narrow, 16);
                    e.choose(h.inside, narrow, g, |e| e.zero(narrow))
                })
                .collect();
            let mut sum = e.cf32(0.0);
            for x in &xs {
                sum = add_squares(e, sum, *x);
            }
            // The rest of a long row waits in `out`.
            let squares = e.for_range_carrying(rest, row_vectors, step, sum, |e, v, sum| {
                let at = e.add(base, v);
                let x = value(e, at);
                e.store(x, e.gep(out, at, narrow), 16);
                add_squares(e, sum, x)
            });
            let total = e.block_sum(squares);
            let mean = e.mulf(total, setup.inverse_hidden);
            let scale = e.rsqrt_approx(e.addf(mean, self.eps));
            for ((h, x), g) in setup.held.iter().zip(xs).zip(gammas) {
                e.when(h.inside, |e| {
                    let y = normalize(e, x, scale, g);
                    e.store(y, e.gep(out, e.add(base, h.v), narrow), 16);
                });
            }
            e.for_range(rest, row_vectors, step, |e, v| {
                let at = e.gep(out, e.add(base, v), narrow);
                let x = e.load(at, narrow, 16);
                let g = e.load(e.gep(self.gamma, v, narrow), narrow, 16);
                e.store(normalize(e, x, scale, g), at, 16);
            });
            e.sync_threads();
        });
    }
}

/// Vectors of a row each thread holds in registers on `world` ranks: one
/// (with 512 threads, rows of up to 4096 bf16 are read once, and never
/// stored before they are normalized), on up to 2 ranks. Measured on 2x
/// H200: 1-2.4% faster than rereading at 1 to 256 rows of 4096. From 3
/// ranks the loads of every peer's vector leave no room in 64 registers
/// (ptxas spilled 4-244 bytes), so they reread.
fn held_vectors(world: u64) -> i64 {
    if world <= 2 { 1 } else { 0 }
}

/// `RmsNorm::setup`'s values.
pub(super) struct NormSetup<'c> {
    held: Vec<Held<'c>>,
    inverse_hidden: Val<'c>,
}

/// One of a thread's held vectors: its index in the row, and whether the
/// row has it.
struct Held<'c> {
    v: Val<'c>,
    inside: Val<'c>,
}

/// `sum + x[0]^2 + ... + x[7]^2` in f32, in lane order, for a bf16 vector.
fn add_squares<'c>(e: &Emitter<'c>, sum: Val<'c>, x: Val<'c>) -> Val<'c> {
    let x = e.extf(x, e.vector(NORM_VECTOR, Type::float32(e.ctx)));
    (0..NORM_VECTOR).fold(sum, |sum, lane| {
        let xi = e.extract(x, lane);
        e.addf(sum, e.mulf(xi, xi))
    })
}

/// `x * scale * gamma` lane by lane in f32, rounded to bf16.
fn normalize<'c>(e: &Emitter<'c>, x: Val<'c>, scale: Val<'c>, gamma: Val<'c>) -> Val<'c> {
    let narrow = e.vector(NORM_VECTOR, Type::bfloat16(e.ctx));
    let wide = e.vector(NORM_VECTOR, Type::float32(e.ctx));
    let (x, g) = (e.extf(x, wide), e.extf(gamma, wide));
    let mut y = e.poison(wide);
    for lane in 0..NORM_VECTOR {
        let yi = e.mulf(e.mulf(e.extract(x, lane), scale), e.extract(g, lane));
        y = e.insert(y, yi, lane);
    }
    e.truncf(y, narrow)
}
