//! The all-reduce kernels as `gpu.func`s, built op by op with typed
//! builders (`emit::Emitter`) from the `symm_mem` device ops: the pool's
//! rank and peer addresses, its barrier, counters, epochs and staging
//! slots. The protocol those ops carry is the runtime's (`symm-protocol`),
//! so compiled and library collectives share pools; convert-symm-mem-to-nvvm
//! lowers them. Every kernel takes the input's pool, the input, the output,
//! the vector count (with `tail`, the element count), for
//! `Push::IntoOutputs` the output's pool, and one pointer per epilogue
//! operand.
//!
//! This module holds what every algorithm shares (the kernel's values,
//! loads, stores, the reduction, the epilogue, the barrier one-shot); each
//! algorithm family has its own: `staged` (slots and call counters),
//! `two_shot`, `lamport`, `rows` (a row statistic fused after the
//! reduction) and `norm` (the runtime library's RMSNorm kernels).

use super::emit::{Blk, Emitter, Val};
use crate::PassError;
use crate::analysis::all_reduce::{Algorithm, AllReduceKernel, Push, Reduction, THREADS};
use crate::ir::scalar::Scalar;
use melior::{dialect::arith::CmpiPredicate, ir::Type};

mod lamport;
mod norm;
mod rows;
mod staged;
mod two_shot;

pub use norm::{RMS_NORM, all_reduce_rms_norm_name, build_all_reduce_rms_norm, build_rms_norm};

impl AllReduceKernel {
    /// Appends this kernel to `module` (the body of a `gpu.module`), which
    /// must also hold the epilogue's function. With `early_rows` (sm_90
    /// and up; 0: never), a rows kernel first lets the next grid launch
    /// (`griddepcontrol.launch_dependents`, after the wait that
    /// `symm-wait-for-prior-grids` puts first) for calls of at most that
    /// many rows: it holds a block per row and mostly waits on its peers,
    /// so the matmul after it gets resident on the other SMs and does what
    /// precedes its own wait (launch, ramp, a GEMV's weight prefetch)
    /// meanwhile; it still waits for this grid to complete before it
    /// touches memory. On 2x H200 the decoder gained 1.5-2 µs at one row
    /// and lost 0.7-2.4 µs at 16 with every call signalling
    /// (bench/results/2026-11-26-early-launch-h200x2.md), so the bound is
    /// the call's rows.
    pub fn build<'c>(
        &self,
        e: &Emitter<'c>,
        module: Blk<'c>,
        early_rows: u64,
    ) -> Result<(), PassError> {
        let element = e
            .float(self.element)
            .ok_or_else(|| format!("no kernel for element type {}", self.element))?;
        let two_shot_tail =
            self.algorithm == Algorithm::TwoShot && self.push != Some(Push::IntoInputs);
        if self.tail && (self.epilogue.is_some() || two_shot_tail) {
            return Err(
                "a kernel with a tail takes no epilogue, and as a two-shot pushes into the inputs"
                    .into(),
            );
        }
        if self.split_k.is_some() && (self.algorithm != Algorithm::OneShot || self.tail) {
            return Err(PassError::Build(
                "a split-K kernel is a one-shot without a tail".into(),
            ));
        }
        let mut parameters = vec![e.pool(), e.ptr(), e.ptr(), e.i64()];
        if self.push == Some(Push::IntoOutputs) {
            parameters.push(e.pool());
        }
        if self.split_k.is_some() {
            parameters.push(e.ptr());
        }
        let operands = self.epilogue.as_ref().map_or(0, |ep| ep.operands.len());
        parameters.extend(std::iter::repeat_n(e.ptr(), operands));
        if let Some(rows) = &self.rows {
            if self.epilogue.is_none() || self.tail || self.push == Some(Push::IntoOutputs) {
                return Err(
                    "a rows kernel takes an epilogue, no tail, and pushes into the inputs".into(),
                );
            }
            // rows_out, the row operands, the statistic's initial value.
            parameters.extend(std::iter::repeat_n(e.ptr(), rows.operands.len() + 1));
            parameters.push(Type::float32(e.ctx));
        }
        let mut epilogue_types = Vec::new();
        for operand in self.epilogue.iter().flat_map(|ep| ep.operands.iter()) {
            epilogue_types.push(
                e.float(operand.element)
                    .ok_or_else(|| format!("no epilogue operand of type {}", operand.element))?,
            );
        }
        let most = self.most_blocks();
        let rows = match &self.rows {
            Some(rows) => Some(rows::RowTypes::new(e, rows)?),
            None => None,
        };
        e.kernel(
            module,
            &self.name(),
            &parameters,
            (self.threads(), most),
            |body| {
                if self.launches_early(early_rows) {
                    // First: a rows kernel's count is its row count.
                    let rows = body.arg(COUNT_PARAMETER);
                    let few = body.cmp(CmpiPredicate::Ule, rows, body.c64(early_rows as i64));
                    body.when(few, |e| {
                        e.grid_dependency(true);
                    });
                }
                let kernel = Kernel::new(self, body, element, epilogue_types);
                match &rows {
                    Some(types) => kernel.rows_body(types),
                    None => kernel.body(),
                }
            },
        );
        Ok(())
    }
}

/// The parameter that holds a kernel's count: vectors of one rank's data
/// (with a tail, elements; a rows kernel's, rows), after the pool, the
/// input and the output.
const COUNT_PARAMETER: usize = 3;

/// Grid strides a two-shot's loops take per iteration (vectors in flight
/// per thread and peer) on 2 ranks, with at most one block per SM
/// (`all_reduce::most_blocks`), as the runtime's PTX kernels do. Measured
/// on 2x H200 (bench/results/2026-11-22-issue13-h200x2.md): 4.4% faster
/// at 8 MiB, 0.8% at 32 MiB; the same unroll on a 264-block grid, or on
/// the one-shots, was slower, so one-shots keep one vector per stride.
const UNROLL: i64 = 4;

/// Vectors a two-shot thread keeps in flight over all peers: `UNROLL` on
/// 2 ranks. Each holds 4 registers; a fixed unroll took up to 255
/// registers on 6 to 8 ranks, more than a 512-thread block can have.
const IN_FLIGHT: i64 = 2 * UNROLL;

/// The two-shot's unroll on `world` ranks: `IN_FLIGHT` vectors in flight.
fn two_shot_unroll(world: u64) -> i64 {
    (IN_FLIGHT / world as i64).max(1)
}

/// One kernel's body being built: its arguments, the values every
/// algorithm uses, and its types.
struct Kernel<'k, 'c> {
    spec: &'k AllReduceKernel,
    e: &'k Emitter<'c>,
    element: Type<'c>,
    epilogue_types: Vec<Type<'c>>,
    pool: Val<'c>,
    input: Val<'c>,
    out: Val<'c>,
    /// Whole vectors, and with a tail the element count.
    nvec: Val<'c>,
    count: Val<'c>,
    out_pool: Option<Val<'c>>,
    /// With `split_k`: the f32 slices whose sum is this rank's data.
    partials: Option<Val<'c>>,
    epilogue_args: Vec<Val<'c>>,
    /// This thread's index in the block and in the grid, and the grid's
    /// thread count (i64).
    tid: Val<'c>,
    gtid: Val<'c>,
    stride: Val<'c>,
    /// The block, as the signal-pad channel (index).
    channel: Val<'c>,
    rank: Val<'c>,
    rank_index: Val<'c>,
    /// Each rank's index, and its address of the input.
    peers: Vec<Val<'c>>,
    sources: Vec<Val<'c>>,
    /// With `Push::IntoOutputs`, each rank's address of the output: found
    /// at the start, not after the first barrier.
    out_targets: Option<Vec<Val<'c>>>,
}

impl<'k, 'c> Kernel<'k, 'c> {
    fn new(
        spec: &'k AllReduceKernel,
        e: &'k Emitter<'c>,
        element: Type<'c>,
        epilogue_types: Vec<Type<'c>>,
    ) -> Self {
        let arg = |index: usize| e.arg(index);
        let into_outputs = spec.push == Some(Push::IntoOutputs);
        let partials_arg = if into_outputs { 5 } else { 4 };
        let partials = spec.split_k.map(|_| arg(partials_arg));
        let first_epilogue = partials_arg + usize::from(partials.is_some());
        let i64 = e.i64();
        let tid = e.cast(e.thread_id(), i64);
        let channel = e.block_id();
        let bid = e.cast(channel, i64);
        let gdim = e.cast(e.grid_dim(), i64);
        let threads = e.c64(spec.threads() as i64);
        let gtid = e.add(e.mul(bid, threads), tid);
        let stride = e.mul(gdim, threads);
        let pool = arg(0);
        let input = arg(1);
        let rank_index = e.pool_rank(pool);
        let rank = e.cast(rank_index, i64);
        let peers: Vec<Val<'c>> = (0..spec.world).map(|p| e.c_index(p as i64)).collect();
        let sources = peers.iter().map(|p| e.peer_ptr(pool, *p, input)).collect();
        let out = arg(2);
        let out_pool = into_outputs.then(|| arg(4));
        let out_targets =
            out_pool.map(|op| peers.iter().map(|p| e.peer_ptr(op, *p, out)).collect());
        // With a tail the count is in elements: whole vectors, then the
        // elements after them (`tail`).
        let count = arg(COUNT_PARAMETER);
        let nvec = if spec.tail {
            e.div(count, e.c64(spec.vector as i64))
        } else {
            count
        };
        Self {
            spec,
            e,
            element,
            epilogue_args: (0..epilogue_types.len())
                .map(|i| arg(first_epilogue + i))
                .collect(),
            epilogue_types,
            pool,
            input,
            out,
            nvec,
            count,
            out_pool,
            partials,
            tid,
            gtid,
            stride,
            channel,
            rank,
            rank_index,
            peers,
            sources,
            out_targets,
        }
    }

    fn body(&self) {
        let e = self.e;
        if self.spec.lamport {
            return self.lamport_one_shot();
        }
        if self.spec.staged {
            return self.staged_one_shot();
        }
        if self.partials.is_some() {
            // Peers read this rank's input after the barrier: the same
            // block's vectors at every rank (the one-shot's loop below).
            e.for_range(self.gtid, self.nvec, self.stride, |e, i| {
                let own = self.own(e, i);
                self.store_raw(e, own, self.input, i);
            });
        }
        e.barrier(self.pool, self.channel);
        match self.spec.algorithm {
            Algorithm::OneShot => {
                self.reduce_all(&self.sources);
                e.barrier(self.pool, self.channel);
            }
            Algorithm::TwoShot if self.spec.push.is_some() => self.push_two_shot(),
            Algorithm::TwoShot => {
                self.two_shot();
                e.barrier(self.pool, self.channel);
            }
        }
    }

    fn vector(&self, element: Type<'c>) -> Type<'c> {
        self.e.vector(self.spec.vector, element)
    }

    /// Bytes of one vector of `element`, its alignment.
    fn align(&self, element: Scalar) -> u64 {
        self.spec.vector * element.bytes().unwrap_or(1)
    }

    /// Vector `i` of the element type at `source`.
    fn load(&self, e: &Emitter<'c>, source: Val<'c>, i: Val<'c>) -> Val<'c> {
        let vector = self.vector(self.element);
        e.load(
            e.gep(source, i, vector),
            vector,
            self.align(self.spec.element),
        )
    }

    /// This rank's vector `i`: its input's, or with `split_k` the sum of
    /// the slices' f32 vectors `i` in slice order, rounded once.
    fn own(&self, e: &Emitter<'c>, i: Val<'c>) -> Val<'c> {
        let Some(slices) = self.spec.split_k.filter(|_| self.partials.is_some()) else {
            return self.load(e, self.input, i);
        };
        let slice_vectors = self.slice_vectors(e);
        let mut sum = None;
        for slice in 0..slices {
            let term = self.slice_term(e, self.slice_vector(e, i, slice_vectors, slice));
            sum = Some(sum.map_or(term, |acc| e.addf(acc, term)));
        }
        let sum = sum.expect("a split-K kernel has slices");
        if self.spec.element == Scalar::F32 {
            sum
        } else {
            e.truncf(sum, self.vector(self.element))
        }
    }

    /// The vectors of a split-K slice: the call's count, or for a rows
    /// kernel (which counts rows) the rows times a row's vectors.
    fn slice_vectors(&self, e: &Emitter<'c>) -> Val<'c> {
        match &self.spec.rows {
            Some(rows) => e.mul(self.nvec, e.c64((rows.columns / self.spec.vector) as i64)),
            None => self.nvec,
        }
    }

    /// Vector `i` of slice `slice` among slices of `slice_vectors`.
    fn slice_vector(
        &self,
        e: &Emitter<'c>,
        i: Val<'c>,
        slice_vectors: Val<'c>,
        slice: u64,
    ) -> Val<'c> {
        match slice {
            0 => i,
            _ => e.add(e.mul(slice_vectors, e.c64(slice as i64)), i),
        }
    }

    /// The f32 vector at `at` of the split-K partials.
    fn slice_term(&self, e: &Emitter<'c>, at: Val<'c>) -> Val<'c> {
        let partials = self
            .partials
            .expect("internal: a split-K kernel has its partials");
        let wide = self.vector(Type::float32(e.ctx));
        e.load(e.gep(partials, at, wide), wide, 16)
    }

    /// Stores vector `value` at `target[i]`, as it is.
    fn store_raw(&self, e: &Emitter<'c>, value: Val<'c>, target: Val<'c>, i: Val<'c>) {
        let vector = self.vector(self.element);
        e.store(
            value,
            e.gep(target, i, vector),
            self.align(self.spec.element),
        );
    }

    /// Vector `i` of every rank (at `sources`), loaded.
    fn load_terms(&self, e: &Emitter<'c>, sources: &[Val<'c>], i: Val<'c>) -> Vec<Val<'c>> {
        sources
            .iter()
            .map(|source| self.load(e, *source, i))
            .collect()
    }

    /// The loaded vectors reduced in rank order; 16-bit types in f32,
    /// rounded back.
    fn combine(&self, e: &Emitter<'c>, terms: Vec<Val<'c>>) -> Val<'c> {
        let wide = self.vector(Type::float32(e.ctx));
        self.combine_as(e, terms, self.vector(self.element), wide)
    }

    /// `combine` of values of type `narrow` (vectors or scalars), in
    /// `wide` (the same shape of f32).
    fn combine_as(
        &self,
        e: &Emitter<'c>,
        terms: Vec<Val<'c>>,
        narrow: Type<'c>,
        wide: Type<'c>,
    ) -> Val<'c> {
        let vector = narrow;
        let widen = self.spec.element != Scalar::F32;
        let terms: Vec<Val<'c>> = terms
            .into_iter()
            .map(|v| if widen { e.extf(v, wide) } else { v })
            .collect();
        let mut acc = terms[0];
        for term in &terms[1..] {
            acc = match self.spec.reduction {
                Reduction::Sum => e.addf(acc, *term),
                Reduction::Max => e.maxnumf(acc, *term),
                Reduction::Min => e.minnumf(acc, *term),
            };
        }
        if widen { e.truncf(acc, vector) } else { acc }
    }

    /// `for i in lo..hi step stride`; in a two-shot `two_shot_unroll`
    /// strides per iteration while they last, then one at a time. The body comes in two halves so that
    /// an iteration issues every load (`load`) before it uses any
    /// (`finish`): loads over NVLink overlap instead of queueing.
    fn strided<T>(
        &self,
        e: &Emitter<'c>,
        lo: Val<'c>,
        hi: Val<'c>,
        load: impl Fn(&Emitter<'c>, Val<'c>) -> T,
        finish: impl Fn(&Emitter<'c>, Val<'c>, T),
    ) {
        let unroll = match self.spec.algorithm {
            Algorithm::TwoShot => two_shot_unroll(self.spec.world),
            Algorithm::OneShot => 1,
        };
        if unroll == 1 {
            e.for_range(lo, hi, self.stride, |e, i| {
                let value = load(e, i);
                finish(e, i, value);
            });
            return;
        }
        let step = e.mul(self.stride, e.c64(unroll));
        // The unrolled loop runs while its last index is below `hi`; the
        // bound may be negative (scf.for compares signed).
        let last = e.mul(self.stride, e.c64(unroll - 1));
        let unrolled_hi = e.sub(hi, last);
        e.for_range(lo, unrolled_hi, step, |e, i| {
            let indices: Vec<Val<'c>> = (0..unroll)
                .map(|k| match k {
                    0 => i,
                    _ => e.add(i, e.mul(self.stride, e.c64(k))),
                })
                .collect();
            let loaded: Vec<T> = indices.iter().map(|i| load(e, *i)).collect();
            for (i, value) in indices.into_iter().zip(loaded) {
                finish(e, i, value);
            }
        });
        // Where it stopped: lo + ceil(max(0, unrolled_hi - lo) / step) * step.
        let span = e.maxsi(e.sub(unrolled_hi, lo), e.c64(0));
        let rest = e.add(lo, e.mul(e.ceildivsi(span, step), step));
        e.for_range(rest, hi, self.stride, |e, i| {
            let value = load(e, i);
            finish(e, i, value);
        });
    }

    /// The one-shot's work: every vector, then the tail, reduced from every
    /// rank's copy (at `sources`) into `out`.
    fn reduce_all(&self, sources: &[Val<'c>]) {
        self.strided(
            self.e,
            self.gtid,
            self.nvec,
            |e, i| self.load_terms(e, sources, i),
            |e, i, terms| {
                let reduced = self.combine(e, terms);
                self.store(e, i, reduced);
            },
        );
        self.tail(sources);
    }

    /// With a tail: this thread's element after the whole vectors, if it
    /// has one (there are fewer than a vector's, so block 0 holds them
    /// all), reduced from `sources` into `out` as scalars.
    fn tail(&self, sources: &[Val<'c>]) {
        self.in_tail(self.e, |e, j| {
            let reduced = self.reduce_scalar(e, sources, j);
            self.store_scalar(e, reduced, self.out, j);
        });
    }

    /// Element `j` of every rank (at `sources`), reduced.
    fn reduce_scalar(&self, e: &Emitter<'c>, sources: &[Val<'c>], j: Val<'c>) -> Val<'c> {
        let terms = sources
            .iter()
            .map(|source| self.load_scalar(e, *source, j))
            .collect();
        self.combine_as(e, terms, self.element, Type::float32(e.ctx))
    }

    /// Element `j` at `source`.
    fn load_scalar(&self, e: &Emitter<'c>, source: Val<'c>, j: Val<'c>) -> Val<'c> {
        let bytes = self.spec.element.bytes().unwrap_or(1);
        e.load(e.gep(source, j, self.element), self.element, bytes)
    }

    /// Stores the element `value` at `target[j]`.
    fn store_scalar(&self, e: &Emitter<'c>, value: Val<'c>, target: Val<'c>, j: Val<'c>) {
        let bytes = self.spec.element.bytes().unwrap_or(1);
        e.store(value, e.gep(target, j, self.element), bytes);
    }

    /// Runs `body` with this thread's tail element's index, if it has one.
    fn in_tail(&self, e: &Emitter<'c>, body: impl FnOnce(&Emitter<'c>, Val<'c>)) {
        if !self.spec.tail {
            return;
        }
        let j = e.add(e.mul(self.nvec, e.c64(self.spec.vector as i64)), self.gtid);
        e.when(e.cmp(CmpiPredicate::Slt, j, self.count), |e| body(e, j));
    }

    /// Stores `value` (a vector of the element type) at `out[i]`, through
    /// the epilogue when there is one: its function runs per lane on the
    /// reduced element and the operands' elements.
    fn store(&self, e: &Emitter<'c>, i: Val<'c>, value: Val<'c>) {
        let operands = self.epilogue_operands(e, i);
        self.store_with(e, i, value, &operands);
    }

    /// `store` with the epilogue's operands loaded already
    /// (`epilogue_operands`), for a kernel that loads them before it
    /// waits for its peers.
    fn store_with(&self, e: &Emitter<'c>, i: Val<'c>, value: Val<'c>, operands: &[Val<'c>]) {
        let vector = self.vector(self.element);
        let result = self.apply_epilogue(e, value, operands);
        let at = e.gep(self.out, i, vector);
        e.store(result, at, self.align(self.spec.element));
    }

    /// The epilogue's operands' vectors `i` (none without an epilogue).
    /// They are the caller's data, ready before the kernel: a kernel may
    /// load them before its exchange, so that their latency hides behind
    /// the wait for its peers.
    fn epilogue_operands(&self, e: &Emitter<'c>, i: Val<'c>) -> Vec<Val<'c>> {
        let Some(epilogue) = &self.spec.epilogue else {
            return Vec::new();
        };
        epilogue
            .operands
            .iter()
            .enumerate()
            .map(|(index, operand)| {
                let ty = self.vector(self.epilogue_types[index]);
                let position = match operand.broadcast_row_vectors {
                    Some(row) => e.rem(i, e.c64(row as i64)),
                    None => i,
                };
                let at = e.gep(self.epilogue_args[index], position, ty);
                e.load(at, ty, self.align(operand.element))
            })
            .collect()
    }

    /// `value` through the epilogue with its operands' vectors.
    fn apply_epilogue(&self, e: &Emitter<'c>, value: Val<'c>, operands: &[Val<'c>]) -> Val<'c> {
        let Some(epilogue) = &self.spec.epilogue else {
            return value;
        };
        let mut lanes = e.poison(self.vector(self.element));
        for lane in 0..self.spec.vector {
            let mut args = vec![e.extract(value, lane)];
            args.extend(operands.iter().map(|v| e.extract(*v, lane)));
            let y = e.call(&epilogue.function, &args, self.element);
            lanes = e.insert(lanes, y, lane);
        }
        lanes
    }
}
