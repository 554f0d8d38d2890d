//! The all-reduce kernels as `gpu.func`s, built op by op with typed
//! builders (`emit::Emitter`) from the `symm_mem` device ops: the pool's
//! rank and peer addresses, its barrier, counters, epochs and staging
//! slots. The protocol those ops carry is the runtime's (`symm-protocol`),
//! so compiled and library collectives share pools; convert-symm-mem-to-nvvm
//! lowers them. Every kernel takes the input's pool, the input, the output,
//! the vector count (with `tail`, the element count), for
//! `Push::IntoOutputs` the output's pool, and one pointer per epilogue
//! operand.

use super::all_reduce::{
    Algorithm, AllReduceKernel, MAX_BLOCKS, Push, Reduction, THREADS, element_bytes,
};
use super::emit::Emitter;
use crate::ir::{Blk, Val};
use melior::{dialect::arith::CmpiPredicate, ir::Type};

mod lamport;
mod rows;

impl AllReduceKernel {
    /// Appends this kernel to `module` (the body of a `gpu.module`), which
    /// must also hold the epilogue's function.
    pub fn build(&self, e: &Emitter, module: Blk) -> Result<(), String> {
        let element = e
            .float(&self.element)
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
            return Err("a split-K kernel is a one-shot without a tail".into());
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
                e.float(&operand.element)
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

/// Entry base of the one-shot all-reduce fused with RMSNorm.
pub const ALL_REDUCE_RMS_NORM: &str = "symm_all_reduce_rms_norm_bf16";
/// Entry of RMSNorm alone.
pub const RMS_NORM: &str = "symm_rms_norm_bf16";

/// The one-shot all-reduce of bf16 rows fused with RMSNorm, for `world`
/// ranks, staged or not: `out = rmsnorm(sum over ranks of input) * gamma`.
/// Parameters: the input's pool, input, out, rows, gamma, hidden size
/// (i64, a multiple of 8), epsilon (f32). Its name is the returned one.
pub fn build_all_reduce_rms_norm(e: &Emitter, module: Blk, world: u64, staged: bool) -> String {
    let spec = AllReduceKernel {
        algorithm: Algorithm::OneShot,
        reduction: Reduction::Sum,
        element: "bf16".into(),
        world,
        vector: NORM_VECTOR,
        epilogue: None,
        staged,
        lamport: false,
        push: None,
        tail: false,
        rows: None,
        split_k: None,
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
pub fn build_rms_norm(e: &Emitter, module: Blk) {
    let parameters = RmsNorm::parameters(e, &[e.ptr(), e.ptr(), e.i64()]);
    e.kernel(
        module,
        RMS_NORM,
        &parameters,
        (THREADS, MAX_BLOCKS),
        |body| {
            let x = body.block.arg(0);
            let narrow = body.vector(NORM_VECTOR, Type::bfloat16(body.ctx));
            let norm = RmsNorm::from_args(body, 3);
            let setup = norm.setup(body, held_vectors(1));
            norm.rows(
                body,
                &setup,
                body.block.arg(2),
                body.block.arg(1),
                |e, at| e.load(e.gep(x, at, narrow), narrow, 16),
            );
        },
    );
}

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
    pool: Val,
    input: Val,
    out: Val,
    /// Whole vectors, and with a tail the element count.
    nvec: Val,
    count: Val,
    out_pool: Option<Val>,
    /// With `split_k`: the f32 slices whose sum is this rank's data.
    partials: Option<Val>,
    epilogue_args: Vec<Val>,
    /// This thread's index in the block and in the grid, and the grid's
    /// thread count (i64).
    tid: Val,
    gtid: Val,
    stride: Val,
    /// The block, as the signal-pad channel (index).
    channel: Val,
    rank: Val,
    rank_index: Val,
    /// Each rank's index, and its address of the input.
    peers: Vec<Val>,
    sources: Vec<Val>,
    /// With `Push::IntoOutputs`, each rank's address of the output: found
    /// at the start, not after the first barrier.
    out_targets: Option<Vec<Val>>,
}

impl<'k, 'c> Kernel<'k, 'c> {
    fn new(
        spec: &'k AllReduceKernel,
        e: &'k Emitter<'c>,
        element: Type<'c>,
        epilogue_types: Vec<Type<'c>>,
    ) -> Self {
        let arg = |index: usize| e.block.arg(index);
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
        let peers: Vec<Val> = (0..spec.world).map(|p| e.c_index(p as i64)).collect();
        let sources = peers.iter().map(|p| e.peer_ptr(pool, *p, input)).collect();
        let out = arg(2);
        let out_pool = into_outputs.then(|| arg(4));
        let out_targets =
            out_pool.map(|op| peers.iter().map(|p| e.peer_ptr(op, *p, out)).collect());
        // With a tail the count is in elements: whole vectors, then the
        // elements after them (`tail`).
        let count = arg(3);
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
    fn align(&self, element: &str) -> u64 {
        self.spec.vector * element_bytes(element).unwrap_or(1)
    }

    /// Vector `i` of the element type at `source`.
    fn load(&self, e: &Emitter<'c>, source: Val, i: Val) -> Val {
        let vector = self.vector(self.element);
        e.load(
            e.gep(source, i, vector),
            vector,
            self.align(&self.spec.element),
        )
    }

    /// This rank's vector `i`: its input's, or with `split_k` the sum of
    /// the slices' f32 vectors `i` in slice order, rounded once.
    fn own(&self, e: &Emitter<'c>, i: Val) -> Val {
        let (Some(partials), Some(slices)) = (self.partials, self.spec.split_k) else {
            return self.load(e, self.input, i);
        };
        // A slice holds the call's vectors: the count, or for a rows
        // kernel (which counts rows) the rows times a row's vectors.
        let slice_vectors = match &self.spec.rows {
            Some(rows) => e.mul(self.nvec, e.c64((rows.columns / self.spec.vector) as i64)),
            None => self.nvec,
        };
        let wide = self.vector(Type::float32(e.ctx));
        let mut sum = None;
        for slice in 0..slices as i64 {
            let at = match slice {
                0 => i,
                _ => e.add(e.mul(slice_vectors, e.c64(slice)), i),
            };
            let term = e.load(e.gep(partials, at, wide), wide, 16);
            sum = Some(sum.map_or(term, |acc| e.addf(acc, term)));
        }
        let sum = sum.expect("a split-K kernel has slices");
        if self.spec.element == "f32" {
            sum
        } else {
            e.truncf(sum, self.vector(self.element))
        }
    }

    /// Stores vector `value` at `target[i]`, as it is.
    fn store_raw(&self, e: &Emitter<'c>, value: Val, target: Val, i: Val) {
        let vector = self.vector(self.element);
        e.store(
            value,
            e.gep(target, i, vector),
            self.align(&self.spec.element),
        );
    }

    /// Vector `i` of every rank (at `sources`), loaded.
    fn load_terms(&self, e: &Emitter<'c>, sources: &[Val], i: Val) -> Vec<Val> {
        sources
            .iter()
            .map(|source| self.load(e, *source, i))
            .collect()
    }

    /// The loaded vectors reduced in rank order; 16-bit types in f32,
    /// rounded back.
    fn combine(&self, e: &Emitter<'c>, terms: Vec<Val>) -> Val {
        let wide = self.vector(Type::float32(e.ctx));
        self.combine_as(e, terms, self.vector(self.element), wide)
    }

    /// `combine` of values of type `narrow` (vectors or scalars), in
    /// `wide` (the same shape of f32).
    fn combine_as(
        &self,
        e: &Emitter<'c>,
        terms: Vec<Val>,
        narrow: Type<'c>,
        wide: Type<'c>,
    ) -> Val {
        let vector = narrow;
        let widen = self.spec.element != "f32";
        let terms: Vec<Val> = terms
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
        lo: Val,
        hi: Val,
        load: impl Fn(&Emitter<'c>, Val) -> T,
        finish: impl Fn(&Emitter<'c>, Val, T),
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
            let indices: Vec<Val> = (0..unroll)
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
    fn reduce_all(&self, sources: &[Val]) {
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
    fn tail(&self, sources: &[Val]) {
        self.in_tail(self.e, |e, j| {
            let reduced = self.reduce_scalar(e, sources, j);
            self.store_scalar(e, reduced, self.out, j);
        });
    }

    /// Element `j` of every rank (at `sources`), reduced.
    fn reduce_scalar(&self, e: &Emitter<'c>, sources: &[Val], j: Val) -> Val {
        let terms = sources
            .iter()
            .map(|source| self.load_scalar(e, *source, j))
            .collect();
        self.combine_as(e, terms, self.element, Type::float32(e.ctx))
    }

    /// Element `j` at `source`.
    fn load_scalar(&self, e: &Emitter<'c>, source: Val, j: Val) -> Val {
        let bytes = element_bytes(&self.spec.element).unwrap_or(1);
        e.load(e.gep(source, j, self.element), self.element, bytes)
    }

    /// Stores the element `value` at `target[j]`.
    fn store_scalar(&self, e: &Emitter<'c>, value: Val, target: Val, j: Val) {
        let bytes = element_bytes(&self.spec.element).unwrap_or(1);
        e.store(value, e.gep(target, j, self.element), bytes);
    }

    /// Runs `body` with this thread's tail element's index, if it has one.
    fn in_tail(&self, e: &Emitter<'c>, body: impl FnOnce(&Emitter<'c>, Val)) {
        if !self.spec.tail {
            return;
        }
        let j = e.add(e.mul(self.nvec, e.c64(self.spec.vector as i64)), self.gtid);
        e.when(e.cmp(CmpiPredicate::Slt, j, self.count), |e| body(e, j));
    }

    /// Stores `value` (a vector of the element type) at `out[i]`, through
    /// the epilogue when there is one: its function runs per lane on the
    /// reduced element and the operands' elements.
    fn store(&self, e: &Emitter<'c>, i: Val, value: Val) {
        let vector = self.vector(self.element);
        let result = self.through_epilogue(e, i, value);
        let at = e.gep(self.out, i, vector);
        e.store(result, at, self.align(&self.spec.element));
    }

    /// `value` (the reduced vector `i`) through the epilogue, if there is
    /// one: its function runs per lane on the reduced element and the
    /// operands' elements.
    fn through_epilogue(&self, e: &Emitter<'c>, i: Val, value: Val) -> Val {
        let vector = self.vector(self.element);
        let mut result = value;
        if let Some(epilogue) = &self.spec.epilogue {
            let mut operands = Vec::new();
            for (index, operand) in epilogue.operands.iter().enumerate() {
                let ty = self.vector(self.epilogue_types[index]);
                let position = match operand.broadcast_row_vectors {
                    Some(row) => e.rem(i, e.c64(row as i64)),
                    None => i,
                };
                let at = e.gep(self.epilogue_args[index], position, ty);
                operands.push(e.load(at, ty, self.align(&operand.element)));
            }
            let mut lanes = e.poison(vector);
            for lane in 0..self.spec.vector {
                let mut args = vec![e.extract(value, lane)];
                args.extend(operands.iter().map(|v| e.extract(*v, lane)));
                let y = e.call(&epilogue.function, &args, self.element);
                lanes = e.insert(lanes, y, lane);
            }
            result = lanes;
        }
        result
    }

    /// `(chunk, [mine_start, mine_hi))`: vectors per rank, and this
    /// thread's first vector of this rank's chunk and the chunk's end.
    fn chunk_bounds(&self) -> (Val, Val, Val) {
        let e = self.e;
        let world = self.spec.world as i64;
        let chunk = e.div(e.add(self.nvec, e.c64(world - 1)), e.c64(world));
        let lo = e.mul(self.rank, chunk);
        let hi = e.min(e.add(lo, chunk), self.nvec);
        (chunk, e.add(lo, self.gtid), hi)
    }

    /// `rank != p` for every rank p.
    fn not_me(&self) -> Vec<Val> {
        (0..self.spec.world)
            .map(|p| {
                self.e
                    .cmp(CmpiPredicate::Ne, self.rank, self.e.c64(p as i64))
            })
            .collect()
    }

    /// For each peer p != me, the vectors of peer p's chunk from
    /// `source(p)` through the epilogue into `out`.
    fn over_peer_chunks(
        &self,
        e: &Emitter<'c>,
        chunk: Val,
        not_me: &[Val],
        source: impl Fn(usize) -> Val,
    ) {
        for (p, differs) in not_me.iter().enumerate() {
            let from = source(p);
            e.when(*differs, |e| {
                let lo = e.mul(e.c64(p as i64), chunk);
                let hi = e.min(e.add(lo, chunk), self.nvec);
                self.strided(
                    e,
                    e.add(lo, self.gtid),
                    hi,
                    |e, i| self.load(e, from, i),
                    |e, i, v| self.store(e, i, v),
                );
            });
        }
    }

    /// This rank's chunk `[start, hi)` reduced from every rank's input into
    /// `out` (through the epilogue); `also` stores each reduced vector
    /// wherever the algorithm needs it besides.
    fn reduce_own_chunk(&self, start: Val, hi: Val, also: impl Fn(&Emitter<'c>, Val, Val)) {
        self.strided(
            self.e,
            start,
            hi,
            |e, i| self.load_terms(e, &self.sources, i),
            |e, i, terms| {
                let reduced = self.combine(e, terms);
                also(e, i, reduced);
                self.store(e, i, reduced);
            },
        );
    }

    /// Reduce-scatter: this rank reduces its chunk and leaves the rounded
    /// result in its own input (for peers) and in `out`; after a barrier,
    /// it copies every peer's reduced chunk. A vector's position is handled
    /// by the same block on every rank, so the per-block barrier orders each
    /// read after the peer's write.
    fn two_shot(&self) {
        let e = self.e;
        let (chunk, start, hi) = self.chunk_bounds();
        self.reduce_own_chunk(start, hi, |e, i, reduced| {
            self.store_raw(e, reduced, self.input, i)
        });
        e.barrier(self.pool, self.channel);
        self.over_peer_chunks(e, chunk, &self.not_me(), |p| self.sources[p]);
    }

    /// Push two-shot: this rank reduces its chunk, writes it (through the
    /// epilogue) to `out` and stores the reduced vectors into every peer's
    /// buffer at the same place: with `Push::IntoOutputs` their output, and
    /// that is all; with `Push::IntoInputs` their input, and after the
    /// closing barrier each rank runs the chunks its peers pushed into its
    /// own input through the epilogue into `out`. Each input byte crosses
    /// NVLink once per direction and no barrier sits between the halves.
    /// Inputs are overwritten.
    fn push_two_shot(&self) {
        let e = self.e;
        let (chunk, start, hi) = self.chunk_bounds();
        let not_me = self.not_me();
        let targets = self.out_targets.as_ref().unwrap_or(&self.sources);
        self.reduce_own_chunk(start, hi, |e, i, reduced| {
            for (p, differs) in not_me.iter().enumerate() {
                e.when(*differs, |e| self.store_raw(e, reduced, targets[p], i));
            }
        });
        // The tail belongs to the last rank, which pushes it like a chunk:
        // written in place by every rank, it could reach a peer before the
        // peer had read it.
        let last = e.c64(self.spec.world as i64 - 1);
        let owner = e.cmp(CmpiPredicate::Eq, self.rank, last);
        e.when(owner, |e| {
            self.in_tail(e, |e, j| {
                let reduced = self.reduce_scalar(e, &self.sources, j);
                self.store_scalar(e, reduced, self.out, j);
                for peer in &self.sources[..self.sources.len() - 1] {
                    self.store_scalar(e, reduced, *peer, j);
                }
            })
        });
        e.barrier(self.pool, self.channel);
        if self.out_pool.is_some() {
            return;
        }
        if self.spec.epilogue.is_some() {
            return self.over_peer_chunks(e, chunk, &not_me, |_| self.input);
        }
        // In place (`out` is the input), the pushed chunks are the result.
        let i64 = e.i64();
        let elsewhere = e.cmp(
            CmpiPredicate::Ne,
            e.ptr_to_int(self.out, i64),
            e.ptr_to_int(self.input, i64),
        );
        e.when(elsewhere, |e| {
            self.over_peer_chunks(e, chunk, &not_me, |_| self.input);
            e.when(e.cmp(CmpiPredicate::Ne, self.rank, last), |e| {
                self.in_tail(e, |e, j| {
                    let pushed = self.load_scalar(e, self.input, j);
                    self.store_scalar(e, pushed, self.out, j);
                })
            });
        });
    }

    /// The staged one-shot: each block copies its vectors of the input into
    /// the staging slot its call counter (epoch) picks, meets its peers
    /// through counters (one posted add each way instead of CAS round
    /// trips), reduces from the peers' slots, and bumps its counter. No
    /// closing barrier is needed: a block writes slot s on its n-th call
    /// and peers read it on their n-th call; their reads of s on call n-2
    /// ended before their call n-1 signalled this block, which it waited
    /// for before call n began.
    fn staged_one_shot(&self) {
        let e = self.e;
        let staging = self.staging();
        self.strided(
            e,
            self.gtid,
            self.nvec,
            |e, i| self.own(e, i),
            |e, i, v| self.store_raw(e, v, staging.mine, i),
        );
        self.in_tail(e, |e, j| {
            let v = self.load_scalar(e, self.input, j);
            self.store_scalar(e, v, staging.mine, j);
        });
        self.meet_counters(&staging);
        self.reduce_all(&staging.slots);
        self.end_staged(&staging);
    }

    /// This block's call on call counter `counter` (`symm_mem.epoch`):
    /// the parity it takes and the number after it.
    fn call(&self, counter: Val) -> Call {
        let e = self.e;
        let epoch = e.epoch(self.pool, counter);
        let one = e.constant(e.int_type(32), 1);
        Call {
            counter,
            parity: e.cast(e.extui(e.and(epoch, one), e.i64()), e.index()),
            next: e.add(epoch, one),
        }
    }

    /// Thread 0 moves the call counter on: the block's next call takes the
    /// other parity. Every thread must have read the counter before.
    fn end_call(&self, call: &Call) {
        let e = self.e;
        let first = e.cmp(CmpiPredicate::Eq, self.tid, e.c64(0));
        e.when(first, |e| e.set_epoch(self.pool, call.counter, call.next));
    }

    /// The staging slots of this block's call (its epoch's parity).
    fn staging(&self) -> Staging {
        let e = self.e;
        let call = self.call(self.channel);
        // Every rank's slot, before the barrier: after it, only the loads
        // of the data itself should stand between a block and its result.
        Staging {
            mine: e.staging_slot(self.pool, self.rank_index, call.parity),
            slots: self
                .peers
                .iter()
                .map(|p| e.staging_slot(self.pool, *p, call.parity))
                .collect(),
            call,
        }
    }

    /// The staged kernels' barrier: thread p < world posts to peer p's
    /// counter for this channel and waits for its own to reach the call's.
    fn meet_counters(&self, staging: &Staging) {
        let e = self.e;
        e.sync_threads();
        let lane = e.cmp(CmpiPredicate::Ult, self.tid, e.c64(self.spec.world as i64));
        e.when(lane, |e| {
            let peer = e.cast(self.tid, e.index());
            e.add_counter(self.pool, peer, self.channel);
            e.wait_counter(self.pool, peer, self.channel, staging.call.next);
        });
        e.sync_threads();
    }

    /// At a staged kernel's end: its next call takes the other slot. No
    /// barrier first: every thread read the epoch before `meet_counters`'
    /// barriers, and a block's reads of this call's slots need not end
    /// before the epoch moves (peers wait for its next call's counters
    /// before they write a slot again; the next call starts after this
    /// kernel ends).
    fn end_staged(&self, staging: &Staging) {
        self.end_call(&staging.call);
    }

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

/// A block's call on one of its call counters: the counter (a channel of
/// `symm_mem.epoch`), the parity of this call, the number after it.
struct Call {
    counter: Val,
    parity: Val,
    next: Val,
}

/// A staged call's slots: this rank's, every rank's (in rank order), and
/// the call.
struct Staging {
    mine: Val,
    slots: Vec<Val>,
    call: Call,
}

/// RMSNorm of bf16 rows, `x / sqrt(mean(x^2) + eps) * gamma` in f32, in
/// vectors of 8: its gamma, hidden size (i64) and epsilon (f32).
pub(super) struct RmsNorm {
    gamma: Val,
    hidden: Val,
    eps: Val,
}

/// bf16 elements of one 16-byte vector.
const NORM_VECTOR: u64 = 8;

impl RmsNorm {
    /// A kernel's parameters: `first`, then gamma, hidden size, epsilon.
    fn parameters<'c>(e: &Emitter<'c>, first: &[Type<'c>]) -> Vec<Type<'c>> {
        let mut parameters = first.to_vec();
        parameters.extend([e.ptr(), e.i64(), Type::float32(e.ctx)]);
        parameters
    }

    /// From the kernel's arguments `first..first + 3`.
    pub(super) fn from_args(e: &Emitter, first: usize) -> Self {
        Self {
            gamma: e.block.arg(first),
            hidden: e.block.arg(first + 1),
            eps: e.block.arg(first + 2),
        }
    }

    fn row_vectors(&self, e: &Emitter) -> Val {
        e.div(self.hidden, e.c64(NORM_VECTOR as i64))
    }

    /// What a thread computes once per kernel: which `held` vectors of a
    /// row it keeps in registers, and `1 / hidden`. Call it early, before
    /// any barrier, so that the division is off the path from the block
    /// sum to the result.
    pub(super) fn setup(&self, e: &Emitter, held: i64) -> NormSetup {
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
        e: &Emitter,
        setup: &NormSetup,
        rows: Val,
        out: Val,
        value: impl Fn(&Emitter, Val) -> Val,
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
            let xs: Vec<Val> = setup
                .held
                .iter()
                .map(|h| {
                    let x = |e: &Emitter| value(e, e.add(base, h.v));
                    e.choose(h.inside, narrow, x, |e| e.zero(narrow))
                })
                .collect();
            // Gamma's vectors, loaded before the block sum hides their
            // latency (per row: a loop-invariant copy would hold 8 more
            // registers through the kernel).
            let gammas: Vec<Val> = setup
                .held
                .iter()
                .map(|h| {
                    let g = |e: &Emitter| e.load(e.gep(self.gamma, h.v, narrow), narrow, 16);
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
pub(super) struct NormSetup {
    held: Vec<Held>,
    inverse_hidden: Val,
}

/// One of a thread's held vectors: its index in the row, and whether the
/// row has it.
struct Held {
    v: Val,
    inside: Val,
}

/// `sum + x[0]^2 + ... + x[7]^2` in f32, in lane order, for a bf16 vector.
fn add_squares(e: &Emitter, sum: Val, x: Val) -> Val {
    let x = e.extf(x, e.vector(NORM_VECTOR, Type::float32(e.ctx)));
    (0..NORM_VECTOR).fold(sum, |sum, lane| {
        let xi = e.extract(x, lane);
        e.addf(sum, e.mulf(xi, xi))
    })
}

/// `x * scale * gamma` lane by lane in f32, rounded to bf16.
fn normalize(e: &Emitter, x: Val, scale: Val, gamma: Val) -> Val {
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
