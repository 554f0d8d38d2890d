//! The skinny matmul kernel, built as IR: `out = a @ w` (or, for a pair
//! sharing `a`, `out = epilogue(a @ w0, a @ w1)`) for a few rows of `a`
//! (decode and small prefill token counts), where the time is the weight's
//! bytes streaming from HBM.
//!
//! One block takes `bn` columns of every weight and the whole K range of
//! its slice (`gpu.block_id y` picks a split-K slice: `a`, the weight and
//! the output each move by their slice stride). Each warp takes every
//! `warps`-th 16-row step of a buffer and is a pipeline of its own: its
//! lanes stream the 16-byte pieces of its weight rows into a ring of
//! `stages` shared-memory buffers of `bk` rows with `cp.async` (zero-filled
//! past K and N) and arrive on the warp's `mbarrier` of the buffer once
//! they land (`cp.async.mbarrier.arrive.noinc`); `stages - 1` buffers are
//! in flight while the warp computes on the oldest. (Bulk copies,
//! `cp.async.bulk`, would move one weight row of 128 bytes each: the floor
//! sweep measured those at 0.21 TB/s, against 2.7 TB/s for 16-byte
//! `cp.async` (bench/floor).) The weight fragments come from shared memory
//! by `ldmatrix.trans` (rows padded by 16 bytes against bank conflicts),
//! the rows of `a` straight from global memory one iteration ahead (they
//! are few and stay in L2), and `mma.sync` m16n8k16 (bf16 in, f32
//! accumulators) multiplies them. At the end the warps' partial sums meet
//! in shared memory and every thread writes whole output elements, through
//! the epilogue when there is one.
//!
//! A prologue (RMSNorm's) runs on `a` as it is read: before the loop each
//! block reduces its rows with the row statistic's step function (an f32
//! sum), keeps the statistics in shared memory, and every element of `a`
//! goes through the prologue's element function before it reaches the
//! tensor cores, rounded to bf16 exactly as the separate kernel rounded it.

use super::tensor_core::TensorCore;
use crate::PassError;
pub use crate::analysis::matmul_groups::{Arg, Output};
use crate::collectives::emit::Emitter;
use crate::collectives::emit::{Blk, Val};
use crate::ir::scalar::Scalar;
use melior::{
    dialect::arith::CmpiPredicate,
    ir::{Type, ValueLike},
};

/// Threads of a warp.
pub(super) const WARP: u64 = 32;
/// Bytes of one bf16 element.
const BF16: u64 = 2;
/// Rows of one `mma.sync` (m16n8k16) tile, and its K step.
const MMA_M: u64 = 16;
pub(super) const MMA_K: u64 = 16;
const MMA_N: u64 = 8;
/// Bytes that pad each weight row in shared memory: 8 rows of an
/// `ldmatrix` then fall in different banks.
const ROW_PAD: u64 = 16;
/// Elements of `a` per 16-byte vector (the statistic's loads).
const VECTOR: u64 = 8;

/// A kernel's tiling.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tile {
    /// Columns of each weight per block (a multiple of 16).
    pub bn: u64,
    /// Weight rows per pipeline stage (a multiple of 16 x warps).
    pub bk: u64,
    /// Shared-memory buffers (stages - 1 in flight).
    pub stages: u64,
    pub warps: u64,
    /// 16-row tiles of `a`: the kernel takes up to 16 x m_tiles rows.
    pub m_tiles: u64,
}

impl Tile {
    /// The pair kernels' tiling, and the single matmuls' (the same today):
    /// the fastest of the sweep on one H100 at a TP-2 rank's Llama-3-8B
    /// shapes (bench/results/2026-11-25-generated-matmul-h100.md).
    pub const PAIR: Tile = Tile {
        bn: 64,
        bk: 256,
        stages: 3,
        warps: 16,
        m_tiles: 1,
    };
    pub const SINGLE: Tile = Tile {
        bn: 64,
        bk: 256,
        stages: 3,
        warps: 16,
        m_tiles: 1,
    };

    pub fn threads(&self) -> u64 {
        self.warps * WARP
    }
    /// Rows of `a` the kernel takes at most.
    pub fn rows(&self) -> u64 {
        self.m_tiles * MMA_M
    }
    fn row_bytes(&self, weights: u64) -> u64 {
        weights * self.bn * BF16 + ROW_PAD
    }
    fn stage_bytes(&self, weights: u64) -> u64 {
        self.bk * self.row_bytes(weights)
    }
    /// Shared memory: the stages, an mbarrier per stage and warp, the row
    /// statistics.
    pub fn shared_bytes(&self, weights: u64) -> u64 {
        self.stages * self.stage_bytes(weights) + self.barrier_bytes() + self.rows() * 4
    }
    fn barrier_bytes(&self) -> u64 {
        self.stages * self.warps * 8
    }
    /// Why this tiling cannot run (`None`: it can).
    pub fn problem(&self, weights: u64) -> Option<String> {
        if self.bn == 0 || !self.bn.is_multiple_of(2 * MMA_N) {
            return Some(format!("bn = {} is not a multiple of 16", self.bn));
        }
        if self.warps == 0 || self.bk == 0 || !self.bk.is_multiple_of(MMA_K * self.warps) {
            return Some(format!(
                "bk = {} is not a multiple of 16 x {} warps",
                self.bk, self.warps
            ));
        }
        if self.stages < 2 || self.m_tiles == 0 {
            return Some("a pipeline needs 2 stages and a row tile".into());
        }
        let scratch = self.warps * self.rows() * weights * self.bn * 4;
        if scratch > self.stages * self.stage_bytes(weights) {
            return Some("the warps' partial sums do not fit in the stages".into());
        }
        if self.shared_bytes(weights) > MAX_SHARED {
            return Some(format!(
                "{} bytes of shared memory, above the {MAX_SHARED} a block may take",
                self.shared_bytes(weights)
            ));
        }
        None
    }
}

/// Dynamic shared memory a block may take on sm_90.
pub const MAX_SHARED: u64 = 227 * 1024;

/// RMSNorm-style prologue: a row statistic, then an element function.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Prologue {
    /// `(x: bf16, acc: f32) -> f32`: the statistic's step (a sum).
    pub step: String,
    /// The element function and its parameters; it returns bf16.
    pub apply: String,
    pub args: Vec<Arg>,
    /// Element types of the column operands (kernel parameters).
    pub columns: Vec<Scalar>,
    /// Where the element function is a row factor times column factors
    /// (`row_scale`): the two as functions of the same parameters, for
    /// kernels that stage the column factors and scale the sums.
    pub row_scale: Option<RowScaleFunctions>,
}

/// The normalization's factors as functions (`row_scale::Part`), each with
/// the element function's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowScaleFunctions {
    /// Returns the row's scale (f32); reads only the statistic.
    pub row: String,
    /// Returns the staged element (bf16); never reads the statistic.
    pub columns: String,
}

impl Prologue {
    /// The element function at column `column` of `a`: `x` through it,
    /// with the row's statistic and the column operands' elements there.
    pub(super) fn element<'c>(
        &self,
        e: &Emitter<'c>,
        x: Val<'c>,
        statistic: Val<'c>,
        column_operands: &[Val<'c>],
        column: Val<'c>,
    ) -> Val<'c> {
        let load = |i: usize| {
            let scalar = self.columns[i];
            let ty = e.float(scalar).expect("checked");
            let align = if scalar == Scalar::F32 { 4 } else { 2 };
            e.load(e.gep(column_operands[i], column, ty), ty, align)
        };
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        self.call(e, (&self.apply, bf16), x, statistic, &load)
    }

    /// The column operands' `PIECE` elements from column `start` (a
    /// multiple of `PIECE` inside the row: the kernels take 16-byte aligned
    /// operands), one vector each.
    pub(super) fn column_pieces<'c>(
        &self,
        e: &Emitter<'c>,
        column_operands: &[Val<'c>],
        start: Val<'c>,
    ) -> Vec<Val<'c>> {
        self.column_vectors(e, column_operands, start, super::gemv::PIECE)
    }

    /// The column operands' `lanes` elements from column `start` (a
    /// multiple of `lanes` inside the row, `lanes` a power of two of at
    /// most `PIECE`), one vector each.
    pub(super) fn column_vectors<'c>(
        &self,
        e: &Emitter<'c>,
        column_operands: &[Val<'c>],
        start: Val<'c>,
        lanes: u64,
    ) -> Vec<Val<'c>> {
        self.columns
            .iter()
            .zip(column_operands)
            .map(|(scalar, operand)| {
                let ty = e.float(*scalar).expect("checked");
                let bytes = scalar.bytes().expect("checked") * lanes;
                e.load(
                    e.gep(*operand, start, ty),
                    e.vector(lanes, ty),
                    bytes.min(16),
                )
            })
            .collect()
    }

    /// The column factors of element `lane` of a piece of `a` (bf16; with
    /// `row_scale` only), the column operands' elements taken from their
    /// pieces (`column_pieces`).
    pub(super) fn column_factors<'c>(
        &self,
        e: &Emitter<'c>,
        functions: &RowScaleFunctions,
        x: Val<'c>,
        column_pieces: &[Val<'c>],
        lane: u64,
    ) -> Val<'c> {
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let column = |i: usize| e.extract(column_pieces[i], lane);
        self.call(e, (&functions.columns, bf16), x, e.cf32(0.0), &column)
    }

    /// The row's scale from its statistic (f32; with `row_scale` only).
    pub(super) fn row_factor<'c>(
        &self,
        e: &Emitter<'c>,
        functions: &RowScaleFunctions,
        statistic: Val<'c>,
    ) -> Val<'c> {
        let x = e.zero(e.float(Scalar::Bf16).expect("bf16"));
        let column = |i: usize| e.zero(e.float(self.columns[i]).expect("checked"));
        self.call(e, (&functions.row, e.f32()), x, statistic, &column)
    }

    /// A call of `function` (returning `result`) with the element
    /// function's parameters: `x`, the statistic, column operand `i`'s
    /// element as `column(i)`.
    fn call<'c>(
        &self,
        e: &Emitter<'c>,
        (function, result): (&str, melior::ir::Type<'c>),
        x: Val<'c>,
        statistic: Val<'c>,
        column: &dyn Fn(usize) -> Val<'c>,
    ) -> Val<'c> {
        let args = self
            .args
            .iter()
            .map(|arg| match arg {
                Arg::Product(_) => x,
                Arg::Statistic => statistic,
                Arg::Column(i) => column(*i),
                Arg::Unused(ty) => e.zero(e.float(*ty).expect("checked")),
            })
            .collect::<Vec<_>>();
        e.call(function, &args, result)
    }
}

/// The epilogue: an element function of the products, returning the
/// output's element.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Epilogue {
    pub function: String,
    pub args: Vec<Arg>,
}

/// One kernel: its static sizes and what it fuses.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SkinnyMatmul {
    pub name: String,
    /// K of one slice, and the columns.
    pub k: u64,
    pub n: u64,
    /// Row stride of `a`, and the slice strides of `a` and of the weights
    /// (elements).
    pub lda: u64,
    pub a_slice: u64,
    pub w_slice: u64,
    /// Split-K slices (the grid's y); the output has one `m x n` slice each.
    pub slices: u64,
    /// 1, or 2 for a pair sharing `a` (then with an epilogue).
    pub weights: u64,
    pub output: Output,
    pub prologue: Option<Prologue>,
    pub epilogue: Option<Epilogue>,
    pub tile: Tile,
    /// Whether the GEMVs let the next grid launch once their loop is done
    /// (`griddepcontrol.launch_dependents`, sm_90 and up; see
    /// `symm-wait-for-prior-grids`).
    pub grid_dependency: bool,
    /// Whether the tensor-core GEMV applies a prologue that is a row
    /// factor times column factors (`Prologue::row_scale`) to `a` as it
    /// reads it, summing the row statistics in its loop, rather than
    /// staging the rows in shared memory first (where they do not fit:
    /// `norm_must_stream`).
    pub stream_norm: bool,
    /// The SMs the GEMVs' grids are balanced over: the target GPU's
    /// (`wave-sms`; `waves::wastes_a_wave`).
    pub wave_sms: u64,
    /// A split-K single matmul whose slices feed a Lamport all-reduce
    /// kernel: the elements of the product per channel of that kernel.
    /// Its GEMVs then take the kernel's pool and a flag, and where the flag
    /// is set each block also sends its part of its slice into the pool's
    /// Lamport areas (`lamport_send`).
    pub lamport_send: Option<u64>,
    /// For calls of up to this many rows (0: none), the grid before this
    /// matmul's kernels lets them launch as that grid starts: the op before
    /// the group is a rows kernel's launch that says so
    /// (`LAUNCHES_DEPENDENTS_ATTR`). A pair's GEMV for such calls then
    /// prefetches its weight's first lines while the all-reduce runs
    /// (`GemvTile::prefetch`).
    pub launched_early: u64,
    /// The weights are stored n x k (nn.Linear's layout, read through the
    /// maps `(m, k)`, `(n, k)`, `(m, n)`): only the GEMVs read them
    /// (`Gemv::emit_linear`, `Gemv::emit_mma_linear`), and the group has no
    /// tiled tensor-core kernel: calls of more rows than its GEMVs take run
    /// the library.
    pub weight_transposed: bool,
}

impl SkinnyMatmul {
    /// An output element from its f32 sums (one per weight): through the
    /// epilogue, the products rounded to bf16 first as the library's way
    /// stores them; else the sum in the output's type.
    pub(super) fn output_element<'c>(&self, e: &Emitter<'c>, sums: &[Val<'c>]) -> Val<'c> {
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        match (&self.epilogue, self.output) {
            (Some(epilogue), _) => {
                let products: Vec<Val<'c>> = sums.iter().map(|s| e.truncf(*s, bf16)).collect();
                let args = epilogue
                    .args
                    .iter()
                    .map(|arg| match arg {
                        Arg::Product(i) => products[*i],
                        Arg::Unused(ty) => e.zero(e.float(*ty).expect("checked")),
                        Arg::Statistic | Arg::Column(_) => products[0],
                    })
                    .collect::<Vec<_>>();
                e.call(&epilogue.function, &args, bf16)
            }
            (None, Output::Bf16) => e.truncf(sums[0], bf16),
            (None, Output::F32) => sums[0],
        }
    }

    /// Why the kernel cannot take these sizes (`None`: it can).
    pub fn problem(&self) -> Option<String> {
        if let Some(problem) = self.tile.problem(self.weights) {
            return Some(problem);
        }
        // The tensor cores take K in 16s; the GEMV of weights stored n x k
        // reads their rows in 16-byte pieces.
        let k_step = if self.weight_transposed {
            VECTOR
        } else {
            MMA_K
        };
        if self.k == 0 || !self.k.is_multiple_of(k_step) {
            return Some(format!("K = {} is not a multiple of {k_step}", self.k));
        }
        if self.n == 0 || (!self.weight_transposed && !self.n.is_multiple_of(VECTOR)) {
            return Some(format!(
                "N = {} is not a multiple of 8 (the weight moves in 16-byte pieces)",
                self.n
            ));
        }
        if !self.lda.is_multiple_of(2) || !self.a_slice.is_multiple_of(2) {
            return Some("the left operand's strides are odd".into());
        }
        if self.prologue.is_some()
            && (!self.k.is_multiple_of(VECTOR) || !self.lda.is_multiple_of(VECTOR))
        {
            return Some("the prologue reads rows in 16-byte vectors".into());
        }
        if self.weights == 0 || self.weights > 2 || (self.weights == 2 && self.epilogue.is_none()) {
            return Some("a pair takes an epilogue (a single matmul may)".into());
        }
        None
    }

    /// Blocks along x (column tiles) and y (slices).
    pub fn grid(&self) -> (u64, u64) {
        (self.n.div_ceil(self.tile.bn), self.slices)
    }

    /// The kernel's parameters: a, the weights, out, m (i64), then with a
    /// prologue the statistic's initial value (f32) and the column operands.
    pub(super) fn parameters<'c>(&self, e: &Emitter<'c>) -> Vec<Type<'c>> {
        let mut parameters = vec![e.ptr(); 2 + self.weights as usize];
        parameters.push(e.i64());
        if let Some(prologue) = &self.prologue {
            parameters.push(e.f32());
            parameters.extend(std::iter::repeat_n(e.ptr(), prologue.columns.len()));
        }
        parameters
    }

    /// How many parameters `parameters` has.
    pub(super) fn parameter_count(&self) -> usize {
        3 + self.weights as usize + self.prologue.as_ref().map_or(0, |p| 1 + p.columns.len())
    }

    /// Appends the kernel to `module` (a gpu.module's body, which holds the
    /// element functions and the dynamic shared memory's symbol).
    pub fn build<'c>(&self, e: &Emitter<'c>, module: Blk<'c>) -> Result<(), PassError> {
        if let Some(problem) = self.problem() {
            return Err(PassError::Build(format!(
                "no kernel for this matmul: {problem}"
            )));
        }
        let parameters = self.parameters(e);
        let mut failure = None;
        e.kernel(
            module,
            &self.name,
            &parameters,
            (
                self.tile.threads(),
                symm_protocol::TWO_SHOT_MAX_BLOCKS as u64,
            ),
            |body| {
                if let Err(message) = Body::new(self, body).emit() {
                    failure = Some(message);
                }
            },
        );
        failure.map_or(Ok(()), Err)
    }
}

/// The kernel's values while its body is written.
struct Body<'a, 'c> {
    k: &'a SkinnyMatmul,
    e: &'a Emitter<'c>,
}

/// Per-thread values every phase uses.
struct Thread<'c> {
    tid: Val<'c>,
    warp: Val<'c>,
    lane: Val<'c>,
    m: Val<'c>,
    n0: Val<'c>,
    a: Val<'c>,
    weights: Vec<Val<'c>>,
    out: Val<'c>,
    shared: Val<'c>,
    /// Columns this block's tile has (bn, or fewer at the right edge).
    columns: Val<'c>,
    init: Option<Val<'c>>,
    column_operands: Vec<Val<'c>>,
}

impl<'a, 'c> Body<'a, 'c> {
    fn new(k: &'a SkinnyMatmul, e: &'a Emitter<'c>) -> Self {
        Self { k, e }
    }

    fn c(&self, number: u64) -> Val<'c> {
        self.e.c64(number as i64)
    }

    fn emit(&self) -> Result<(), PassError> {
        let e = self.e;
        let k = self.k;
        let tile = k.tile;
        let arg = |i: usize| e.arg(i);
        let weights = k.weights as usize;
        let i64 = e.i64();
        let tid = e.cast(e.thread_id(), i64);
        let warp = e.div(tid, self.c(WARP));
        let lane = e.rem(tid, self.c(WARP));
        let n0 = e.mul(e.cast(e.block_id(), i64), self.c(tile.bn));
        let slice = e.cast(e.block_id_y(), i64);
        let m = arg(2 + weights);
        // Each slice's operands.
        let a = e.gep(arg(0), e.mul(slice, self.c(k.a_slice)), e.int_type(16));
        let weight_ptrs = (0..weights)
            .map(|j| e.gep(arg(1 + j), e.mul(slice, self.c(k.w_slice)), e.int_type(16)))
            .collect::<Vec<_>>();
        let out_slice = e.mul(e.mul(slice, m), self.c(k.n * k.output.bytes()));
        let out = e.gep(arg(1 + weights), out_slice, e.int_type(8));
        let (init, column_operands) = match &k.prologue {
            Some(prologue) => (
                Some(arg(3 + weights)),
                (0..prologue.columns.len())
                    .map(|i| arg(4 + weights + i))
                    .collect(),
            ),
            None => (None, Vec::new()),
        };
        let columns = e.min(self.c(tile.bn), e.sub(self.c(k.n), n0));
        let t = Thread {
            tid,
            warp,
            lane,
            m,
            n0,
            a,
            weights: weight_ptrs,
            out,
            shared: e.dynamic_shared(),
            columns,
            init,
            column_operands,
        };

        // An mbarrier per stage and warp: the warp's lanes arrive once
        // their copies land.
        let first = e.cmp(CmpiPredicate::Eq, tid, self.c(0));
        e.when(first, |e| {
            for stage in 0..tile.stages {
                for warp in 0..tile.warps {
                    let bar = self.barrier_at(e, &t, self.c(stage), self.c(warp));
                    e.mbarrier_init(bar, WARP as i64);
                }
            }
        });
        e.sync_threads();

        let iterations = k.k.div_ceil(tile.bk);
        for iteration in 0..iterations.min(tile.stages - 1) {
            self.fill(e, &t, self.c(iteration));
        }
        if let Some(prologue) = &k.prologue {
            self.statistics(&t, prologue);
        }

        let accumulators = tile.m_tiles * k.weights * (tile.bn / MMA_N) * 4;
        let zero = e.zero(e.vector(accumulators, e.f32()));
        // The rows of `a` one iteration ahead: their loads (and the
        // prologue) are in flight while the iteration waits and multiplies.
        let first_fragments = self.fragments(e, &t, self.c(0));
        let carried = e.for_range_carrying_many(
            (self.c(0), self.c(iterations), self.c(1)),
            &[zero, first_fragments],
            |e, iteration, carried| {
                let ahead = e.add(iteration, self.c(tile.stages - 1));
                let refill = e.cmp(CmpiPredicate::Ult, ahead, self.c(iterations));
                e.when(refill, |e| self.fill(e, &t, ahead));
                let next = self.fragments(e, &t, e.add(iteration, self.c(1)));
                let acc = self.step(e, &t, iteration, carried[0], carried[1]);
                // The warp's lanes are done with this buffer before any of
                // them refills it.
                e.sync_warp();
                vec![acc, next]
            },
        );
        // Every warp's copies have landed and been read: the stages become
        // the scratch of the warps' partial sums.
        e.sync_threads();
        self.finish(&t, carried[0]);
        Ok(())
    }

    /// Stage `stage`'s buffer, and its mbarrier.
    fn stage_at(&self, e: &Emitter<'c>, t: &Thread<'c>, stage: Val<'c>) -> Val<'c> {
        let bytes = e.mul(stage, self.c(self.k.tile.stage_bytes(self.k.weights)));
        e.byte_offset(t.shared, bytes)
    }
    /// The mbarrier of `warp`'s rows of stage `stage`.
    fn barrier_at(
        &self,
        e: &Emitter<'c>,
        t: &Thread<'c>,
        stage: Val<'c>,
        warp: Val<'c>,
    ) -> Val<'c> {
        let tile = self.k.tile;
        let base = self.c(tile.stages * tile.stage_bytes(self.k.weights));
        let index = e.add(e.mul(stage, self.c(tile.warps)), warp);
        e.byte_offset(t.shared, e.add(base, e.mul(index, self.c(8))))
    }
    fn statistic_at(&self, e: &Emitter<'c>, t: &Thread<'c>, row: Val<'c>) -> Val<'c> {
        let tile = self.k.tile;
        let base = self.c(tile.stages * tile.stage_bytes(self.k.weights) + tile.barrier_bytes());
        e.byte_offset(t.shared, e.add(base, e.mul(row, self.c(4))))
    }

    /// This warp starts loading its rows of iteration `iteration` (the
    /// 16-row steps it multiplies) of every weight's column tile into the
    /// iteration's buffer: each lane copies its 16-byte pieces with
    /// `cp.async` (zero-filled past K and N) and arrives on the warp's
    /// mbarrier of the buffer once they land. The warps never wait for each
    /// other: each streams and multiplies its own rows.
    fn fill(&self, e: &Emitter<'c>, t: &Thread<'c>, iteration: Val<'c>) {
        let k = self.k;
        let tile = k.tile;
        let stage = e.rem(iteration, self.c(tile.stages));
        let k0 = e.mul(iteration, self.c(tile.bk));
        let buffer = self.stage_at(e, t, stage);
        let pieces_per_row = tile.bn * BF16 / 16;
        let per_weight = MMA_K * pieces_per_row;
        let per_step = per_weight * k.weights;
        let steps = tile.bk / (MMA_K * tile.warps);
        let copies = per_step.div_ceil(WARP);
        let i32 = e.i32();
        for s in 0..steps {
            let first_row = self.ks(e, t, s);
            for copy in 0..copies {
                let piece = e.add(self.c(copy * WARP), t.lane);
                let issue = |e: &Emitter<'c>| {
                    let j = e.div(piece, self.c(per_weight));
                    let within = e.rem(piece, self.c(per_weight));
                    let row = e.add(first_row, e.div(within, self.c(pieces_per_row)));
                    let chunk = e.rem(within, self.c(pieces_per_row));
                    let k_row = e.add(k0, row);
                    let column = e.add(t.n0, e.mul(chunk, self.c(8)));
                    let inside = e.and(
                        e.cmp(CmpiPredicate::Ult, k_row, self.c(k.k)),
                        e.cmp(CmpiPredicate::Ult, column, self.c(k.n)),
                    );
                    let at = e.add(e.mul(k_row, self.c(k.n)), column);
                    let at = e.select(inside, at, self.c(0));
                    let weight = if k.weights == 1 {
                        t.weights[0]
                    } else {
                        let second = e.cmp(CmpiPredicate::Ne, j, self.c(0));
                        e.select(second, t.weights[1], t.weights[0])
                    };
                    let src = e.gep(weight, at, e.int_type(16));
                    let dst_offset = e.add(
                        e.add(
                            e.mul(row, self.c(tile.row_bytes(k.weights))),
                            e.mul(j, self.c(tile.bn * BF16)),
                        ),
                        e.mul(chunk, self.c(16)),
                    );
                    let dst = e.byte_offset(buffer, dst_offset);
                    let valid = e.select(inside, e.constant(i32, 16), e.constant(i32, 0));
                    e.async_copy_16(dst, src, valid);
                };
                if per_step.is_multiple_of(WARP) || copy + 1 < copies {
                    issue(e);
                } else {
                    e.when(e.cmp(CmpiPredicate::Ult, piece, self.c(per_step)), issue);
                }
            }
        }
        e.async_copies_arrive(self.barrier_at(e, t, stage, t.warp));
    }

    /// The prologue's row statistics, in shared memory: each row of `a`
    /// (up to the tile's rows) reduced by the whole block.
    fn statistics(&self, t: &Thread<'c>, prologue: &Prologue) {
        let e = self.e;
        let k = self.k;
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let vectors = self.c(k.k / VECTOR);
        let init = t.init.expect("a prologue's kernel takes the initial value");
        for row in 0..k.tile.rows() {
            let present = e.cmp(CmpiPredicate::Ult, self.c(row), t.m);
            let hi = e.select(present, vectors, self.c(0));
            let partial = e.for_range_carrying(
                t.tid,
                hi,
                self.c(k.tile.threads()),
                e.cf32(0.0),
                |e, v, acc| {
                    let at = e.add(self.c(row * k.lda), e.mul(v, self.c(VECTOR)));
                    let ptr = e.gep(t.a, at, bf16);
                    let vector = e.load(ptr, e.vector(VECTOR, bf16), 16);
                    let mut acc = acc;
                    for lane in 0..VECTOR {
                        let x = e.extract(vector, lane);
                        acc = e.call(&prologue.step, &[x, acc], e.f32());
                    }
                    acc
                },
            );
            let total = e.block_sum(partial);
            let statistic = e.addf(init, total);
            let first = e.cmp(CmpiPredicate::Eq, t.tid, self.c(0));
            e.when(first, |e| {
                e.store(statistic, self.statistic_at(e, t, self.c(row)), 4);
            });
        }
        e.sync_threads();
    }

    /// Element `(row, column)` of `a` as the tensor cores take it: loaded,
    /// through the prologue when there is one; zero outside the matrix.
    fn a_pair(
        &self,
        e: &Emitter<'c>,
        t: &Thread<'c>,
        row: Val<'c>,
        column: Val<'c>,
        valid: Val<'c>,
    ) -> Val<'c> {
        let k = self.k;
        let bf16 = e.float(Scalar::Bf16).expect("bf16");
        let inside = e.and(valid, e.cmp(CmpiPredicate::Ult, row, t.m));
        let i32 = e.i32();
        e.choose(
            inside,
            i32,
            |e| {
                let at = e.add(e.mul(row, self.c(k.lda)), column);
                let ptr = e.gep(t.a, at, bf16);
                match &k.prologue {
                    None => e.load(ptr, i32, 4),
                    Some(prologue) => {
                        let pair = e.load(ptr, e.vector(2, bf16), 4);
                        let statistic = e.load(self.statistic_at(e, t, row), e.f32(), 4);
                        let mut elements = [pair; 2];
                        for (lane, element) in elements.iter_mut().enumerate() {
                            let x = e.extract(pair, lane as u64);
                            let col = e.add(column, self.c(lane as u64));
                            *element = prologue.element(e, x, statistic, &t.column_operands, col);
                        }
                        e.pack(elements[0], elements[1])
                    }
                }
            },
            |e| e.constant(i32, 0),
        )
    }

    /// This warp's fragments of `a` for `iteration` (its 16-row steps, each
    /// 16 rows of `a` by 16 of K, as `mma.sync` takes them): a vector of
    /// steps x m_tiles x 4 registers; zero past K and past the rows.
    fn fragments(&self, e: &Emitter<'c>, t: &Thread<'c>, iteration: Val<'c>) -> Val<'c> {
        let tile = self.k.tile;
        let steps = tile.bk / (MMA_K * tile.warps);
        let quad = e.div(t.lane, self.c(4));
        let pair = e.mul(e.rem(t.lane, self.c(4)), self.c(2));
        let k_base = e.mul(iteration, self.c(tile.bk));
        let lanes = steps * tile.m_tiles * 4;
        let mut fragments = e.zero(e.vector(lanes, e.i32()));
        for s in 0..steps {
            let kk = e.add(k_base, self.ks(e, t, s));
            let valid = e.cmp(CmpiPredicate::Ult, kk, self.c(self.k.k));
            let c0 = e.add(kk, pair);
            let c1 = e.add(c0, self.c(8));
            for mt in 0..tile.m_tiles {
                let r0 = e.add(self.c(mt * MMA_M), quad);
                let r1 = e.add(r0, self.c(8));
                let registers = [
                    self.a_pair(e, t, r0, c0, valid),
                    self.a_pair(e, t, r1, c0, valid),
                    self.a_pair(e, t, r0, c1, valid),
                    self.a_pair(e, t, r1, c1, valid),
                ];
                for (i, register) in registers.iter().enumerate() {
                    let lane = (s * tile.m_tiles + mt) * 4 + i as u64;
                    fragments = e.insert(fragments, *register, lane);
                }
            }
        }
        fragments
    }

    /// Row offset in the buffer of this warp's step `s`.
    fn ks(&self, e: &Emitter<'c>, t: &Thread<'c>, s: u64) -> Val<'c> {
        let tile = self.k.tile;
        e.mul(e.add(self.c(s * tile.warps), t.warp), self.c(MMA_K))
    }

    /// One pipeline iteration: waits for its buffer, then this warp's
    /// 16-row steps of it, with the fragments of `a` loaded before.
    fn step(
        &self,
        e: &Emitter<'c>,
        t: &Thread<'c>,
        iteration: Val<'c>,
        acc: Val<'c>,
        fragments: Val<'c>,
    ) -> Val<'c> {
        let k = self.k;
        let tile = k.tile;
        let stage = e.rem(iteration, self.c(tile.stages));
        let round = e.div(iteration, self.c(tile.stages));
        let parity = e.trunci(e.rem(round, self.c(2)), e.i32());
        let steps = tile.bk / (MMA_K * tile.warps);
        let k_base = e.mul(iteration, self.c(tile.bk));
        e.mbarrier_wait(self.barrier_at(e, t, stage, t.warp), parity);
        let buffer = self.stage_at(e, t, stage);
        let row_bytes = tile.row_bytes(k.weights);
        let lane_row = e.rem(t.lane, self.c(16));
        let lane_half = e.div(t.lane, self.c(16));
        let mut acc = acc;
        let whole = k.k.is_multiple_of(tile.bk);
        for s in 0..steps {
            let ks = self.ks(e, t, s);
            let valid = e.cmp(CmpiPredicate::Ult, e.add(k_base, ks), self.c(k.k));
            let tiles: Vec<[Val<'c>; 4]> = (0..tile.m_tiles)
                .map(|mt| {
                    std::array::from_fn(|i| {
                        e.extract(fragments, (s * tile.m_tiles + mt) * 4 + i as u64)
                    })
                })
                .collect();
            let multiply = |e: &Emitter<'c>, acc: Val<'c>| {
                let row = e.mul(e.add(ks, lane_row), self.c(row_bytes));
                let mut acc = acc;
                for j in 0..k.weights {
                    for pair_tile in 0..tile.bn / (2 * MMA_N) {
                        let column = (j * tile.bn + pair_tile * 2 * MMA_N) * BF16;
                        let column = e.add(self.c(column), e.mul(lane_half, self.c(MMA_N * BF16)));
                        let b = e.ldmatrix_x4_trans(e.byte_offset(buffer, e.add(row, column)));
                        for half in 0..2usize {
                            let n_tile = pair_tile * 2 + half as u64;
                            let fragment = [b[2 * half], b[2 * half + 1]];
                            for (mt, a) in tiles.iter().enumerate() {
                                let index = self.accumulator(mt as u64, j, n_tile);
                                let c = std::array::from_fn(|i| e.extract(acc, index + i as u64));
                                let d = e.mma_bf16(*a, fragment, c);
                                for (i, v) in d.iter().enumerate() {
                                    acc = e.insert(acc, *v, index + i as u64);
                                }
                            }
                        }
                    }
                }
                acc
            };
            acc = if whole {
                multiply(e, acc)
            } else {
                let ty = acc.r#type();
                e.choose(valid, ty, |e| multiply(e, acc), |_| acc)
            };
        }
        acc
    }

    /// Index of accumulator tile (m tile, weight, n tile)'s first f32.
    fn accumulator(&self, mt: u64, weight: u64, n_tile: u64) -> u64 {
        let tiles = self.k.tile.bn / MMA_N;
        ((mt * self.k.weights + weight) * tiles + n_tile) * 4
    }

    /// The warps' sums meet in shared memory; each thread then writes
    /// whole elements of the block's tile.
    fn finish(&self, t: &Thread<'c>, acc: Val<'c>) {
        let e = self.e;
        let k = self.k;
        let tile = k.tile;
        let width = k.weights * tile.bn;
        let rows = tile.rows();
        let quad = e.div(t.lane, self.c(4));
        let pair = e.mul(e.rem(t.lane, self.c(4)), self.c(2));
        let f32 = e.f32();
        let scratch = |e: &Emitter<'c>, warp: Val<'c>, row: Val<'c>, column: Val<'c>| {
            let at = e.add(
                e.mul(e.add(e.mul(warp, self.c(rows)), row), self.c(width)),
                column,
            );
            e.byte_offset(t.shared, e.mul(at, self.c(4)))
        };
        for mt in 0..tile.m_tiles {
            for j in 0..k.weights {
                for n_tile in 0..tile.bn / MMA_N {
                    let index = self.accumulator(mt, j, n_tile);
                    let column = e.add(self.c(j * tile.bn + n_tile * MMA_N), pair);
                    for half in 0..2u64 {
                        let row = e.add(self.c(mt * MMA_M + half * 8), quad);
                        for lane in 0..2u64 {
                            let v = e.extract(acc, index + half * 2 + lane);
                            let at = scratch(e, t.warp, row, e.add(column, self.c(lane)));
                            e.store(v, at, 4);
                        }
                    }
                }
            }
        }
        e.sync_threads();
        let elements = self.c(rows * tile.bn);
        e.for_range(t.tid, elements, self.c(tile.threads()), |e, index| {
            let row = e.div(index, self.c(tile.bn));
            let column = e.rem(index, self.c(tile.bn));
            let inside = e.and(
                e.cmp(CmpiPredicate::Ult, row, t.m),
                e.cmp(CmpiPredicate::Ult, column, t.columns),
            );
            e.when(inside, |e| {
                let sums = (0..k.weights)
                    .map(|j| {
                        let column = e.add(column, self.c(j * tile.bn));
                        let mut sum = e.load(scratch(e, self.c(0), row, column), f32, 4);
                        for warp in 1..tile.warps {
                            let v = e.load(scratch(e, self.c(warp), row, column), f32, 4);
                            sum = e.addf(sum, v);
                        }
                        sum
                    })
                    .collect::<Vec<_>>();
                let result = k.output_element(e, &sums);
                let at = e.add(e.mul(row, self.c(k.n)), e.add(t.n0, column));
                let bytes = k.output.bytes();
                let ptr = e.byte_offset(t.out, e.mul(at, self.c(bytes)));
                e.store(result, ptr, bytes);
            });
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(k: u64, n: u64, tile: Tile) -> SkinnyMatmul {
        SkinnyMatmul {
            name: "k".into(),
            k,
            n,
            lda: k,
            a_slice: 0,
            w_slice: 0,
            slices: 1,
            weights: 1,
            output: Output::Bf16,
            prologue: None,
            epilogue: None,
            tile,
            grid_dependency: false,
            stream_norm: false,
            wave_sms: crate::matmul::waves::DEFAULT_WAVE_SMS,
            lamport_send: None,
            launched_early: 0,
            weight_transposed: false,
        }
    }

    #[test]
    fn the_default_tilings_fit_an_sm() {
        assert_eq!(Tile::PAIR.problem(2), None);
        assert_eq!(Tile::SINGLE.problem(1), None);
        assert!(Tile::PAIR.shared_bytes(2) <= MAX_SHARED);
        // The warps' partial sums reuse the stages.
        let pair = Tile::PAIR;
        assert!(pair.warps * pair.rows() * 2 * pair.bn * 4 <= pair.stages * pair.stage_bytes(2));
    }

    #[test]
    fn tilings_that_cannot_run_are_refused() {
        let bad_bk = Tile {
            bk: 48,
            ..Tile::SINGLE
        };
        assert!(bad_bk.problem(1).unwrap().contains("bk = 48"));
        let bad_bn = Tile {
            bn: 40,
            ..Tile::SINGLE
        };
        assert!(bad_bn.problem(1).unwrap().contains("bn = 40"));
        let too_big = Tile {
            stages: 8,
            ..Tile::PAIR
        };
        assert!(too_big.problem(2).unwrap().contains("shared memory"));
        let one_stage = Tile {
            stages: 1,
            ..Tile::SINGLE
        };
        assert!(one_stage.problem(1).is_some());
    }

    #[test]
    fn sizes_the_kernel_cannot_take_are_refused() {
        assert!(
            single(1000, 4096, Tile::SINGLE)
                .problem()
                .unwrap()
                .contains("K = 1000")
        );
        assert!(
            single(4096, 1001, Tile::SINGLE)
                .problem()
                .unwrap()
                .contains("N = 1001")
        );
        // K a multiple of 16 but not of the 256-row stage, N not of the
        // 32-column tile: taken (the last stage and column tile are partial).
        assert_eq!(single(2064, 1000, Tile::SINGLE).problem(), None);
        // A pair needs its epilogue.
        let pair = SkinnyMatmul {
            weights: 2,
            ..single(4096, 7168, Tile::PAIR)
        };
        assert!(pair.problem().unwrap().contains("epilogue"));
    }

    #[test]
    fn the_grid_covers_every_column_and_slice() {
        let mut k = single(3584, 4096, Tile::SINGLE);
        k.slices = 2;
        assert_eq!(k.grid(), (64, 2));
        assert_eq!(single(2064, 1000, Tile::SINGLE).grid(), (16, 1));
    }
}
