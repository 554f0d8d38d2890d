//! The signal-pad kernels, generated as PTX.
//!
//! This generator is the single source of truth for the kernels. PTX is
//! text, so building needs no CUDA toolkit; the driver compiles it for the
//! GPU at first use (`cuModuleLoadData`), and every kernel is specialized
//! by algorithm, element type, reduction and world size, with the loads
//! from the peers unrolled. See README ("Kernels") for why PTX and not
//! NVRTC.
//!
//! Protocol (PyTorch symm_mem's): every rank's signal pad holds one u32
//! slot per (channel, peer), channel = thread block. A put is a CAS 0->1
//! with release semantics at system scope on the peer's slot
//! (channel, me); a wait is a CAS 1->0 with acquire semantics on my slot
//! (channel, peer). Slots go back to 0, so CUDA-graph replays need no reset.
//! A wait that exceeds the timeout sets the error flag and gives up, so a
//! dead peer becomes an error on the host instead of a hang.

use std::fmt::Write;

pub use symm_protocol::{
    MAX_BLOCKS, MAX_WORLD, PAD_BYTES, STAGING_MAX, THREADS, TWO_SHOT_MAX_BLOCKS,
};
/// Offset of the counter slots (the staged one-shot's barrier) in a pad.
const COUNTERS: usize = symm_protocol::CAS_BYTES;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Dtype {
    F32,
    F16,
    Bf16,
}

impl Dtype {
    pub fn bytes(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F16 | Dtype::Bf16 => 2,
        }
    }
    /// Elements in one 16-byte vector.
    pub fn per_vector(self) -> usize {
        16 / self.bytes()
    }
    fn name(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F16 => "f16",
            Dtype::Bf16 => "bf16",
        }
    }
}

impl Dtype {
    /// The element type of a C ABI code (`symm_protocol::abi::DtypeCode`).
    pub fn from_code(code: i64) -> crate::error::Result<Self> {
        use symm_protocol::abi::DtypeCode;
        match DtypeCode::from_code(code) {
            Some(DtypeCode::F32) => Ok(Dtype::F32),
            Some(DtypeCode::F16) => Ok(Dtype::F16),
            Some(DtypeCode::Bf16) => Ok(Dtype::Bf16),
            None => Err(crate::error::Error::InvalidArgument(format!(
                "unknown dtype code {code}"
            ))),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
}

impl ReduceOp {
    fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
        }
    }
    fn instruction(self) -> &'static str {
        match self {
            ReduceOp::Sum => "add.f32",
            ReduceOp::Max => "max.f32",
            ReduceOp::Min => "min.f32",
        }
    }
}

impl ReduceOp {
    /// The reduction of a C ABI code (`symm_protocol::abi::ReduceCode`).
    pub fn from_code(code: i64) -> crate::error::Result<Self> {
        use symm_protocol::abi::ReduceCode;
        match ReduceCode::from_code(code) {
            Some(ReduceCode::Sum) => Ok(ReduceOp::Sum),
            Some(ReduceCode::Max) => Ok(ReduceOp::Max),
            Some(ReduceCode::Min) => Ok(ReduceOp::Min),
            None => Err(crate::error::Error::InvalidArgument(format!(
                "unknown reduction {code}"
            ))),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    OneShot,
    TwoShot,
}

impl Algorithm {
    /// The algorithm of a C ABI code (`symm_protocol::abi::AlgorithmCode`).
    pub fn from_code(code: i64) -> crate::error::Result<Self> {
        use symm_protocol::abi::AlgorithmCode;
        match AlgorithmCode::from_code(code) {
            Some(AlgorithmCode::OneShot) => Ok(Algorithm::OneShot),
            Some(AlgorithmCode::TwoShot) => Ok(Algorithm::TwoShot),
            None => Err(crate::error::Error::InvalidArgument(format!(
                "unknown algorithm {code}"
            ))),
        }
    }
}

/// One all-reduce kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AllReduceSpec {
    pub algorithm: Algorithm,
    pub dtype: Dtype,
    pub op: ReduceOp,
    pub world: usize,
    /// One-shot only: copy the input into a staging slot chosen by a
    /// per-block call counter and read peers' slots, which needs no closing
    /// barrier (see `all_reduce_ptx`). Takes 3 more parameters.
    pub staged: bool,
}

impl AllReduceSpec {
    pub fn name(&self) -> String {
        let algorithm = match (self.algorithm, self.staged) {
            (Algorithm::OneShot, true) => "one_shot_staged",
            (Algorithm::OneShot, false) => "one_shot",
            (Algorithm::TwoShot, _) => "two_shot",
        };
        world_entry(
            &format!("symm_{algorithm}_{}_{}", self.op.name(), self.dtype.name()),
            self.world,
        )
    }
}

/// Blocks for an all-reduce of `elements` elements: enough for one vector
/// per thread of the vectors a rank reduces (all for one-shot, a 1/world
/// share for two-shot), at most `MAX_BLOCKS` (`TWO_SHOT_MAX_BLOCKS`).
pub fn grid_blocks(elements: usize, dtype: Dtype, algorithm: Algorithm, world: usize) -> u32 {
    let vectors = elements.div_ceil(dtype.per_vector());
    let (mine, most) = match algorithm {
        Algorithm::OneShot => (vectors, MAX_BLOCKS),
        Algorithm::TwoShot => (vectors.div_ceil(world.max(1)), TWO_SHOT_MAX_BLOCKS),
    };
    mine.div_ceil(THREADS as usize).clamp(1, most) as u32
}

const HEADER: &str = ".version 8.0\n.target sm_90\n.address_size 64\n\n";

/// Register file and fixed registers shared by every kernel body.
const REGISTERS: &str = "\
  .reg .pred %p<32>;
  .reg .b16 %h<80>;
  .reg .b32 %r<400>;
  .reg .b64 %rd<120>;
  .reg .f32 %f<200>;
";

/// Loads the parameters every kernel takes and the thread coordinates:
/// %rd1 bufs table, %rd2 pads table, %rd3 out, %rd4 n, %r5 rank,
/// %rd5 timeout ns, %rd6 error flag, %rd10 start time, %r1 tid, %r2 ctaid,
/// %r3 ntid, %r4 nctaid.
fn prologue(out: &mut String) {
    out.push_str(
        "  ld.param.u64 %rd1, [p_bufs];
  ld.param.u64 %rd2, [p_pads];
  ld.param.u64 %rd3, [p_out];
  ld.param.u64 %rd4, [p_n];
  ld.param.u32 %r5, [p_rank];
  ld.param.u64 %rd5, [p_timeout];
  ld.param.u64 %rd6, [p_err];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mov.u32 %r4, %nctaid.x;
  mov.u64 %rd10, %globaltimer;
",
    );
}

const PARAMS: &str = "  .param .u64 p_bufs, .param .u64 p_pads, .param .u64 p_out, .param .u64 p_n,
  .param .u32 p_rank, .param .u64 p_timeout, .param .u64 p_err";

/// The staged one-shot's extra parameters: staging offset in each buffer,
/// bytes per slot, this rank's epoch counters.
pub(crate) const STAGED_PARAMS: &str =
    ",\n  .param .u64 p_staging, .param .u64 p_slot, .param .u64 p_epochs";

/// The entry of a kernel specialized for `world` ranks: `{base}_w{world}`.
pub fn world_entry(base: &str, world: usize) -> String {
    format!("{base}_w{world}")
}

/// Opens a kernel: module header, the entry `name` with the standard
/// parameters then `extra_params`, the register file, `locals`, and the
/// prologue. Close it with [`KERNEL_END`].
pub(crate) fn kernel_start(name: &str, extra_params: &str, locals: &str) -> String {
    let mut out = String::from(HEADER);
    let _ = write!(
        out,
        ".visible .entry {name}(\n{PARAMS}{extra_params})\n{{\n{REGISTERS}{locals}"
    );
    prologue(&mut out);
    out
}

pub(crate) const KERNEL_END: &str = "  ret;\n}\n";

/// Jumps to `done` with the error flag set once the timeout has passed.
fn timeout_check(out: &mut String, done: &str) {
    let _ = write!(
        out,
        "  mov.u64 %rd12, %globaltimer;
  sub.u64 %rd12, %rd12, %rd10;
  setp.gt.u64 %p3, %rd12, %rd5;
  @%p3 st.global.u32 [%rd6], 1;
  @%p3 bra {done};
"
    );
}

/// One signal-pad handshake: spins on a CAS of slot (channel, `slot_rank`)
/// in the pad of rank `pad_rank` from `from` to `to` with `sem`, then goes
/// to `done`. A timeout also goes to `done`, with the error flag set.
#[allow(clippy::too_many_arguments)]
fn handshake(
    out: &mut String,
    label: &str,
    pad_rank: &str,
    slot_rank: &str,
    sem: &str,
    from: u32,
    to: u32,
    done: &str,
) {
    let _ = write!(
        out,
        "  mul.wide.u32 %rd13, {pad_rank}, 8;
  add.u64 %rd13, %rd2, %rd13;
  ld.global.u64 %rd14, [%rd13];
  mad.lo.u32 %r10, %r2, {MAX_WORLD}, {slot_rank};
  mul.wide.u32 %rd15, %r10, 4;
  add.u64 %rd14, %rd14, %rd15;
{label}:
  atom.{sem}.sys.global.cas.b32 %r11, [%rd14], {from}, {to};
  setp.eq.u32 %p2, %r11, {from};
  @%p2 bra {done};
"
    );
    timeout_check(out, done);
    let _ = writeln!(out, "  bra {label};");
}

/// A barrier of this block's channel with every peer; threads 0..world
/// each handle one peer (put to the peer's slot for us, then wait on our
/// slot for the peer), then the block synchronizes.
pub(crate) fn barrier(out: &mut String, label: &str, world: usize) {
    let _ = write!(
        out,
        "  bar.sync 0;
  setp.lt.u32 %p1, %r1, {world};
  @!%p1 bra {label}_sync;
"
    );
    let put_done = format!("{label}_put_done");
    let sync = format!("{label}_sync");
    handshake(
        out,
        &format!("{label}_put"),
        "%r1",
        "%r5",
        "release",
        0,
        1,
        &put_done,
    );
    let _ = writeln!(out, "{put_done}:");
    handshake(
        out,
        &format!("{label}_wait"),
        "%r5",
        "%r1",
        "acquire",
        1,
        0,
        &sync,
    );
    let _ = write!(out, "{sync}:\n  bar.sync 0;\n");
}

/// %rd20+p = base address of peer p's buffer.
pub(crate) fn load_peer_bases(out: &mut String, world: usize) {
    for p in 0..world {
        let _ = writeln!(out, "  ld.global.u64 %rd{}, [%rd1+{}];", 20 + p, 8 * p);
    }
}

/// f32 registers %f(first..first+n) from the raw 32-bit words
/// %r(word..word+4) of one 16-byte vector.
pub(crate) fn unpack(out: &mut String, dtype: Dtype, word: usize, first: usize) {
    for w in 0..4 {
        match dtype {
            Dtype::F32 => {
                let _ = writeln!(out, "  mov.b32 %f{}, %r{};", first + w, word + w);
            }
            Dtype::F16 => {
                let _ = writeln!(
                    out,
                    "  mov.b32 {{%h1, %h2}}, %r{};\n  cvt.f32.f16 %f{}, %h1;\n  cvt.f32.f16 %f{}, %h2;",
                    word + w,
                    first + 2 * w,
                    first + 2 * w + 1
                );
            }
            Dtype::Bf16 => {
                // bf16 -> f32 is exact: the bf16 bits are the f32's top half.
                let _ = writeln!(
                    out,
                    "  shl.b32 %r390, %r{w0}, 16;\n  mov.b32 %f{a}, %r390;\n  and.b32 %r391, %r{w0}, -65536;\n  mov.b32 %f{b}, %r391;",
                    w0 = word + w,
                    a = first + 2 * w,
                    b = first + 2 * w + 1
                );
            }
        }
    }
}

/// Packs %f(first..) back into 32-bit words %r(word..word+4).
pub(crate) fn pack(out: &mut String, dtype: Dtype, first: usize, word: usize) {
    for w in 0..4 {
        match dtype {
            Dtype::F32 => {
                let _ = writeln!(out, "  mov.b32 %r{}, %f{};", word + w, first + w);
            }
            Dtype::F16 | Dtype::Bf16 => {
                let cvt = if dtype == Dtype::F16 {
                    "cvt.rn.f16.f32"
                } else {
                    "cvt.rn.bf16.f32"
                };
                let _ = writeln!(
                    out,
                    "  {cvt} %h1, %f{};\n  {cvt} %h2, %f{};\n  mov.b32 %r{}, {{%h1, %h2}};",
                    first + 2 * w,
                    first + 2 * w + 1,
                    word + w
                );
            }
        }
    }
}

/// Vectors reduced per loop iteration in the main loops, for loads in
/// flight over NVLink.
const UNROLL: usize = 4;

/// Issues the 16-byte loads of vector slot `slot` (byte offset in
/// %rd(100+slot)) from every peer into %r(100+32*slot+4p..).
pub(crate) fn load_vector(out: &mut String, spec: &AllReduceSpec, slot: usize) {
    for p in 0..spec.world {
        let word = 100 + 32 * slot + 4 * p;
        let _ = writeln!(
            out,
            "  add.u64 %rd{a}, %rd{base}, %rd{offset};\n  ld.global.v4.b32 {{%r{}, %r{}, %r{}, %r{}}}, [%rd{a}];",
            word,
            word + 1,
            word + 2,
            word + 3,
            a = 60 + 8 * slot + p,
            base = 20 + p,
            offset = 100 + slot
        );
    }
}

/// Reduces the loaded slot over all peers, in rank order, into words
/// %r(60+4*slot..).
pub(crate) fn reduce_loaded(out: &mut String, spec: &AllReduceSpec, slot: usize) {
    let lanes = spec.dtype.per_vector();
    let (acc, tmp) = (40 * slot, 40 * slot + 20);
    unpack(out, spec.dtype, 100 + 32 * slot, acc);
    for p in 1..spec.world {
        unpack(out, spec.dtype, 100 + 32 * slot + 4 * p, tmp);
        for lane in 0..lanes {
            let _ = writeln!(
                out,
                "  {} %f{a}, %f{a}, %f{t};",
                spec.op.instruction(),
                a = acc + lane,
                t = tmp + lane
            );
        }
    }
    pack(out, spec.dtype, acc, 60 + 4 * slot);
}

/// Stores reduced slot `slot` at byte offset %rd(100+slot) from `base`.
fn store_vector(out: &mut String, base: &str, slot: usize) {
    store_vector_guarded(out, "", base, slot);
}

/// `store_vector` under a predicate `guard` ("@%p1 ", or "" for none).
fn store_vector_guarded(out: &mut String, guard: &str, base: &str, slot: usize) {
    let word = 60 + 4 * slot;
    let _ = writeln!(
        out,
        "  add.u64 %rd41, {base}, %rd{};\n  {guard}st.global.v4.b32 [%rd41], {{%r{}, %r{}, %r{}, %r{}}};",
        100 + slot,
        word,
        word + 1,
        word + 2,
        word + 3
    );
}

/// Loads the vector at byte offset %rd(100+slot) from `base` into the words
/// `store_vector` stores, %r(60+4*slot..).
fn load_words(out: &mut String, base: &str, slot: usize) {
    let word = 60 + 4 * slot;
    let _ = writeln!(
        out,
        "  add.u64 %rd{a}, {base}, %rd{};\n  ld.global.v4.b32 {{%r{}, %r{}, %r{}, %r{}}}, [%rd{a}];",
        100 + slot,
        word,
        word + 1,
        word + 2,
        word + 3,
        a = 60 + 8 * slot
    );
}

/// A loop over vector indices %rd38 (start) below `end` by stride %rd37,
/// `UNROLL` vectors per iteration while they last, then one at a time;
/// `body` emits the work for the slots given.
fn vector_loop(out: &mut String, label: &str, end: &str, body: impl Fn(&mut String, &[usize])) {
    let _ = write!(
        out,
        "  mul.lo.u64 %rd39, %rd37, {UNROLL};
{label}_unrolled:
  mad.lo.u64 %rd95, %rd37, {last}, %rd38;
  setp.ge.u64 %p4, %rd95, {end};
  @%p4 bra {label}_single;
",
        last = UNROLL - 1
    );
    for slot in 0..UNROLL {
        let _ = writeln!(
            out,
            "  mad.lo.u64 %rd96, %rd37, {slot}, %rd38;\n  shl.b64 %rd{}, %rd96, 4;",
            100 + slot
        );
    }
    let slots: Vec<usize> = (0..UNROLL).collect();
    body(out, &slots);
    let _ = write!(
        out,
        "  add.u64 %rd38, %rd38, %rd39;
  bra {label}_unrolled;
{label}_single:
  setp.ge.u64 %p4, %rd38, {end};
  @%p4 bra {label}_done;
  shl.b64 %rd100, %rd38, 4;
"
    );
    body(out, &[0]);
    let _ = write!(
        out,
        "  add.u64 %rd38, %rd38, %rd37;
  bra {label}_single;
{label}_done:
"
    );
}

/// Reduces the scalar element at byte offset %rd40 over all peers into %r60
/// (f32) or %h3 (16-bit).
fn reduce_scalar(out: &mut String, spec: &AllReduceSpec) {
    for p in 0..spec.world {
        let _ = writeln!(
            out,
            "  add.u64 %rd{a}, %rd{base}, %rd40;",
            a = 50 + p,
            base = 20 + p
        );
        match spec.dtype {
            Dtype::F32 => {
                let _ = writeln!(out, "  ld.global.f32 %f{}, [%rd{}];", 30 + p, 50 + p);
            }
            Dtype::F16 => {
                let _ = writeln!(
                    out,
                    "  ld.global.b16 %h{h}, [%rd{a}];\n  cvt.f32.f16 %f{f}, %h{h};",
                    h = 10 + p,
                    a = 50 + p,
                    f = 30 + p
                );
            }
            Dtype::Bf16 => {
                let _ = writeln!(
                    out,
                    "  ld.global.u16 %r{r}, [%rd{a}];\n  shl.b32 %r{r}, %r{r}, 16;\n  mov.b32 %f{f}, %r{r};",
                    r = 150 + p,
                    a = 50 + p,
                    f = 30 + p
                );
            }
        }
    }
    for p in 1..spec.world {
        let _ = writeln!(out, "  {} %f30, %f30, %f{};", spec.op.instruction(), 30 + p);
    }
}

fn store_scalar(out: &mut String, dtype: Dtype, address: &str) {
    match dtype {
        Dtype::F32 => {
            let _ = writeln!(out, "  st.global.f32 [{address}], %f30;");
        }
        Dtype::F16 => {
            let _ = writeln!(
                out,
                "  cvt.rn.f16.f32 %h3, %f30;\n  st.global.b16 [{address}], %h3;"
            );
        }
        Dtype::Bf16 => {
            let _ = writeln!(
                out,
                "  cvt.rn.bf16.f32 %h3, %f30;\n  st.global.b16 [{address}], %h3;"
            );
        }
    }
}

/// Copies the scalar element at `from` to `to` (raw bits).
fn copy_scalar(out: &mut String, dtype: Dtype, from: &str, to: &str) {
    let (kind, reg) = match dtype {
        Dtype::F32 => ("b32", "%r60"),
        Dtype::F16 | Dtype::Bf16 => ("b16", "%h3"),
    };
    let _ = writeln!(
        out,
        "  ld.global.{kind} {reg}, [{from}];\n  st.global.{kind} [{to}], {reg};"
    );
}

/// The elements after the last whole vector: global thread g < tail
/// handles element vectors*per_vector + g at byte offset %rd40; the other
/// threads go to `label`.
fn tail_prefix(out: &mut String, spec: &AllReduceSpec, label: &str) {
    let _ = write!(
        out,
        "  shr.u64 %rd30, %rd4, {shift};
  shl.b64 %rd31, %rd30, {shift};
  sub.u64 %rd32, %rd4, %rd31;
  mad.lo.u32 %r20, %r2, %r3, %r1;
  cvt.u64.u32 %rd33, %r20;
  setp.ge.u64 %p5, %rd33, %rd32;
  @%p5 bra {label};
  add.u64 %rd34, %rd31, %rd33;
  mul.lo.u64 %rd40, %rd34, {bytes};
",
        shift = spec.dtype.per_vector().trailing_zeros(),
        bytes = spec.dtype.bytes()
    );
}

/// The tail reduced in full into `out` and into the buffers at `also`.
fn tail(out: &mut String, spec: &AllReduceSpec, label: &str, also: &[String]) {
    tail_prefix(out, spec, label);
    reduce_scalar(out, spec);
    for base in std::iter::once("%rd3").chain(also.iter().map(String::as_str)) {
        let _ = writeln!(out, "  add.u64 %rd41, {base}, %rd40;");
        store_scalar(out, spec.dtype, "%rd41");
    }
    let _ = writeln!(out, "{label}:");
}

/// PTX of one all-reduce kernel; its entry is `spec.name()`.
pub fn all_reduce_ptx(spec: &AllReduceSpec) -> String {
    let staged = spec.staged && spec.algorithm == Algorithm::OneShot;
    let extra = if staged { STAGED_PARAMS } else { "" };
    let mut out = kernel_start(&spec.name(), extra, "");
    let shift = spec.dtype.per_vector().trailing_zeros();
    // %rd35 = whole vectors; %rd36 = global thread index; %rd37 = stride.
    // Computed once: the staging copy and the reduction both stride by them.
    let _ = write!(
        out,
        "  shr.u64 %rd35, %rd4, {shift};
  mad.lo.u32 %r20, %r2, %r3, %r1;
  cvt.u64.u32 %rd36, %r20;
  mul.lo.u32 %r21, %r4, %r3;
  cvt.u64.u32 %rd37, %r21;
"
    );
    if staged {
        stage_input(&mut out, spec);
        counter_barrier(&mut out, spec.world);
        // Peers' staging slots of this parity replace their buffers.
        for p in 0..spec.world {
            let _ = writeln!(out, "  add.u64 %rd{r}, %rd{r}, %rd17;", r = 20 + p);
        }
    } else {
        barrier(&mut out, "start", spec.world);
        load_peer_bases(&mut out, spec.world);
    }
    match spec.algorithm {
        Algorithm::OneShot => {
            out.push_str("  mov.u64 %rd38, %rd36;\n");
            vector_loop(&mut out, "main", "%rd35", |out, slots| {
                for &slot in slots {
                    load_vector(out, spec, slot);
                }
                for &slot in slots {
                    reduce_loaded(out, spec, slot);
                    store_vector(out, "%rd3", slot);
                }
            });
            tail(&mut out, spec, "tail_done", &[]);
        }
        Algorithm::TwoShot => two_shot_body(&mut out, spec),
    }
    if staged {
        bump_epoch(&mut out);
    } else if spec.algorithm == Algorithm::OneShot {
        barrier(&mut out, "end", spec.world);
    }
    out.push_str(KERNEL_END);
    out
}

/// Two-shot, push style: rank r reduces chunk r (a 1/world share of the
/// vectors) from every rank's input and stores the result into its `out`
/// and into every peer's input, so each byte crosses NVLink once per
/// direction and no barrier sits between the two halves. The tail after
/// the last whole vector belongs to the last rank. After the closing
/// barrier a rank whose `out` is not its input copies the chunks its
/// peers pushed from its input into `out`; each block copies exactly the
/// vectors its peers' same-numbered blocks wrote, so its own barrier
/// channel is the only wait. Inputs end up clobbered (in place: the result).
fn two_shot_body(out: &mut String, spec: &AllReduceSpec) {
    let world = spec.world;
    // chunk = ceil(vectors / world); chunk of rank q = [q*chunk, min(vectors, (q+1)*chunk)).
    // %rd42 chunk, %rd47 my input, %p28 = (out == my input), %p(20+q) = (q == rank).
    let _ = write!(
        out,
        "  add.u64 %rd42, %rd35, {w1};
  div.u64 %rd42, %rd42, {world};
  mul.wide.u32 %rd47, %r5, 8;
  add.u64 %rd47, %rd1, %rd47;
  ld.global.u64 %rd47, [%rd47];
  setp.eq.u64 %p28, %rd3, %rd47;
",
        w1 = world - 1
    );
    for q in 0..world {
        let _ = writeln!(out, "  setp.eq.u32 %p{}, %r5, {q};", 20 + q);
    }
    chunk_bounds(out, "%r5");
    vector_loop(out, "scatter", "%rd45", |out, slots| {
        for &slot in slots {
            load_vector(out, spec, slot);
        }
        for &slot in slots {
            reduce_loaded(out, spec, slot);
            store_vector(out, "%rd3", slot);
            for q in 0..world {
                let guard = format!("@!%p{} ", 20 + q);
                store_vector_guarded(out, &guard, &format!("%rd{}", 20 + q), slot);
            }
        }
    });
    // The tail: block 0 of the last rank, pushed like the chunks.
    let _ = write!(
        out,
        "  setp.ne.u32 %p6, %r5, {last};
  @%p6 bra tail_done;
",
        last = world - 1
    );
    let peers: Vec<String> = (0..world - 1).map(|q| format!("%rd{}", 20 + q)).collect();
    tail(out, spec, "tail_done", &peers);
    barrier(out, "end", world);
    out.push_str("  @%p28 bra copy_done;\n");
    for q in 0..world {
        let _ = writeln!(out, "  @%p{} bra copy_{q}_done;", 20 + q);
        let _ = writeln!(out, "  mov.u32 %r22, {q};");
        chunk_bounds(out, "%r22");
        vector_loop(out, &format!("copy_{q}"), "%rd45", |out, slots| {
            for &slot in slots {
                load_words(out, "%rd47", slot);
            }
            for &slot in slots {
                store_vector(out, "%rd3", slot);
            }
        });
    }
    let _ = write!(
        out,
        "  setp.eq.u32 %p6, %r5, {last};
  @%p6 bra copy_done;
",
        last = world - 1
    );
    tail_prefix(out, spec, "copy_done");
    out.push_str("  add.u64 %rd41, %rd47, %rd40;\n  add.u64 %rd46, %rd3, %rd40;\n");
    copy_scalar(out, spec.dtype, "%rd41", "%rd46");
    out.push_str("copy_done:\n");
}

/// %rd45 = end of chunk `rank` and %rd38 = this thread's first vector in it
/// (uses %rd42 = chunk length, %rd36 = global thread index).
fn chunk_bounds(out: &mut String, rank: &str) {
    let _ = write!(
        out,
        "  cvt.u64.u32 %rd43, {rank};
  mul.lo.u64 %rd44, %rd43, %rd42;
  add.u64 %rd45, %rd44, %rd42;
  min.u64 %rd45, %rd45, %rd35;
  add.u64 %rd38, %rd44, %rd36;
"
    );
}

/// The staged one-shot's barrier: counters instead of CAS handshakes. A put
/// is a posted `red.release.sys.add` of 1 on the peer's counter for
/// (channel, me), with no round trip; a wait spins with acquire loads until
/// our counter for (channel, peer) reaches this block's call number + 1
/// (%r40 + 1). Counters only grow (compared modulo 2^32), so nothing is
/// reset and graph replays work; every block's call number is the same on
/// every rank, and a peer is at most one call ahead.
pub(crate) fn counter_barrier(out: &mut String, world: usize) {
    let _ = write!(
        out,
        "  bar.sync 0;
  setp.lt.u32 %p1, %r1, {world};
  @!%p1 bra counted_sync;
  mul.wide.u32 %rd13, %r1, 8;
  add.u64 %rd13, %rd2, %rd13;
  ld.global.u64 %rd14, [%rd13];
  mad.lo.u32 %r10, %r2, {MAX_WORLD}, %r5;
  mul.wide.u32 %rd15, %r10, 4;
  add.u64 %rd14, %rd14, %rd15;
  red.release.sys.global.add.u32 [%rd14+{COUNTERS}], 1;
  mul.wide.u32 %rd13, %r5, 8;
  add.u64 %rd13, %rd2, %rd13;
  ld.global.u64 %rd14, [%rd13];
  mad.lo.u32 %r10, %r2, {MAX_WORLD}, %r1;
  mul.wide.u32 %rd15, %r10, 4;
  add.u64 %rd14, %rd14, %rd15;
  add.u32 %r12, %r40, 1;
counted_wait:
  ld.acquire.sys.global.u32 %r11, [%rd14+{COUNTERS}];
  sub.u32 %r13, %r11, %r12;
  setp.ge.s32 %p2, %r13, 0;
  @%p2 bra counted_sync;
"
    );
    timeout_check(out, "counted_sync");
    out.push_str("  bra counted_wait;\ncounted_sync:\n  bar.sync 0;\n");
}

/// Staged one-shot, before the opening barrier: picks this block's slot
/// from its call counter (%r40, at %rd16) and copies this rank's input
/// elements into it; %rd17 = the slot's offset in every buffer.
///
/// No closing barrier is needed: a block writes slot p on its n-th call
/// and peers read it on their n-th call; their (n-2)-th reads of slot p
/// ended before their (n-1)-th call signalled this block, which this block
/// waited for before its n-th call began. %r40 (the call number) is kept
/// for `counter_barrier`.
/// Reads this block's call counter (%r40, at %rd16) and picks its staging
/// slot: %rd17 = the slot's offset in every buffer, %rd18 = this rank's
/// buffer, %rd19 = its slot.
pub(crate) fn load_epoch(out: &mut String) {
    out.push_str(
        "  ld.param.u64 %rd7, [p_staging];
  ld.param.u64 %rd8, [p_slot];
  ld.param.u64 %rd9, [p_epochs];
  mul.wide.u32 %rd16, %r2, 4;
  add.u64 %rd16, %rd9, %rd16;
  ld.global.u32 %r40, [%rd16];
  and.b32 %r41, %r40, 1;
  cvt.u64.u32 %rd17, %r41;
  mul.lo.u64 %rd17, %rd17, %rd8;
  add.u64 %rd17, %rd17, %rd7;
  mul.wide.u32 %rd18, %r5, 8;
  add.u64 %rd18, %rd1, %rd18;
  ld.global.u64 %rd18, [%rd18];
  add.u64 %rd19, %rd18, %rd17;
",
    );
}

/// After a staged kernel's work: the block's next call uses the other slot.
pub(crate) fn bump_epoch(out: &mut String) {
    out.push_str(
        "  bar.sync 0;
  setp.ne.u32 %p10, %r1, 0;
  @%p10 bra epoch_done;
  add.u32 %r40, %r40, 1;
  st.global.u32 [%rd16], %r40;
epoch_done:
",
    );
}

/// Copies this block's share of the input to its staging slot; needs the
/// grid-stride registers %rd35..%rd37 of `all_reduce_ptx`.
fn stage_input(out: &mut String, spec: &AllReduceSpec) {
    load_peer_bases(out, spec.world);
    load_epoch(out);
    let shift = spec.dtype.per_vector().trailing_zeros();
    let _ = write!(
        out,
        "  mov.u64 %rd38, %rd36;
stage_loop:
  setp.ge.u64 %p4, %rd38, %rd35;
  @%p4 bra stage_tail;
  shl.b64 %rd40, %rd38, 4;
  add.u64 %rd41, %rd18, %rd40;
  ld.global.v4.b32 {{%r60, %r61, %r62, %r63}}, [%rd41];
  add.u64 %rd41, %rd19, %rd40;
  st.global.v4.b32 [%rd41], {{%r60, %r61, %r62, %r63}};
  add.u64 %rd38, %rd38, %rd37;
  bra stage_loop;
stage_tail:
  shl.b64 %rd31, %rd35, {shift};
  sub.u64 %rd32, %rd4, %rd31;
  setp.ge.u64 %p5, %rd36, %rd32;
  @%p5 bra stage_done;
  add.u64 %rd34, %rd31, %rd36;
  mul.lo.u64 %rd40, %rd34, {bytes};
  add.u64 %rd41, %rd18, %rd40;
  add.u64 %rd42, %rd19, %rd40;
",
        bytes = spec.dtype.bytes()
    );
    if spec.dtype == Dtype::F32 {
        out.push_str("  ld.global.b32 %r64, [%rd41];\n  st.global.b32 [%rd42], %r64;\n");
    } else {
        out.push_str("  ld.global.b16 %h4, [%rd41];\n  st.global.b16 [%rd42], %h4;\n");
    }
    out.push_str("stage_done:\n");
}

/// Entry base of the barrier-only kernel (all-gather + matmul brackets its
/// copies with it); the entry is [`world_entry`] of it.
pub const BARRIER: &str = "symm_barrier";

/// One block that barriers with every peer on channel 0 (the standard
/// parameters; only the pads, rank, timeout and error flag are used).
pub fn barrier_ptx(world: usize) -> String {
    let mut out = kernel_start(&world_entry(BARRIER, world), "", "");
    barrier(&mut out, "only", world);
    out.push_str(KERNEL_END);
    out
}

/// Entry base of the barrier stress kernel; the entry is [`world_entry`] of it.
pub const BARRIER_TEST: &str = "symm_barrier_test";

/// A single-block kernel for testing the protocol: `iters` times, thread
/// 0 writes the iteration number to word 0 of its buffer, the block
/// barriers with every peer, reads each peer's word 0 and counts any value
/// other than the iteration (a lost or stale signal would show), then
/// barriers again before the next write. `p_out` points at a u32 count.
pub fn barrier_test_ptx(world: usize) -> String {
    let mut out = kernel_start(&world_entry(BARRIER_TEST, world), "", "");
    load_peer_bases(&mut out, world);
    out.push_str("  mul.wide.u32 %rd60, %r5, 8;\n  add.u64 %rd60, %rd1, %rd60;\n  ld.global.u64 %rd60, [%rd60];\n  mov.u64 %rd61, 0;\niter:\n  setp.ge.u64 %p7, %rd61, %rd4;\n  @%p7 bra iters_done;\n  setp.ne.u32 %p8, %r1, 0;\n  cvt.u32.u64 %r30, %rd61;\n  @!%p8 st.relaxed.sys.global.u32 [%rd60], %r30;\n");
    barrier(&mut out, "first", world);
    out.push_str("  @%p8 bra checked;\n");
    for p in 0..world {
        let _ = writeln!(
            out,
            "  ld.relaxed.sys.global.u32 %r31, [%rd{}];\n  setp.ne.u32 %p9, %r31, %r30;\n  @%p9 atom.global.add.u32 %r32, [%rd3], 1;",
            20 + p
        );
    }
    out.push_str("checked:\n");
    barrier(&mut out, "second", world);
    out.push_str("  add.u64 %rd61, %rd61, 1;\n  bra iter;\niters_done:\n");
    out.push_str(KERNEL_END);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_names_its_specialization() {
        let spec = AllReduceSpec {
            algorithm: Algorithm::TwoShot,
            dtype: Dtype::Bf16,
            op: ReduceOp::Max,
            world: 4,
            staged: false,
        };
        assert_eq!(spec.name(), "symm_two_shot_max_bf16_w4");
        let ptx = all_reduce_ptx(&spec);
        assert!(ptx.contains(".visible .entry symm_two_shot_max_bf16_w4("));
        assert!(ptx.contains("atom.release.sys.global.cas.b32"));
        assert!(ptx.contains("atom.acquire.sys.global.cas.b32"));
        assert!(ptx.contains("cvt.rn.bf16.f32"));
        assert!(ptx.contains("max.f32"));
        // One unrolled 16-byte load per peer in each reduction.
        // Scatter: 4 peers x (4 unrolled + 1 single); gather: per rank the same.
        assert_eq!(ptx.matches("ld.global.v4.b32").count(), 4 * 5 + 4 * 5);
        assert!(!ptx.contains("multimem"), "never NVLink multicast");
    }

    #[test]
    fn labels_are_unique() {
        for algorithm in [Algorithm::OneShot, Algorithm::TwoShot] {
            for world in 2..=MAX_WORLD {
                let ptx = all_reduce_ptx(&AllReduceSpec {
                    algorithm,
                    dtype: Dtype::F16,
                    op: ReduceOp::Sum,
                    world,
                    staged: algorithm == Algorithm::OneShot,
                });
                let mut labels: Vec<&str> = ptx
                    .lines()
                    .filter(|line| line.ends_with(':') && !line.starts_with(' '))
                    .collect();
                let count = labels.len();
                labels.sort_unstable();
                labels.dedup();
                assert_eq!(
                    labels.len(),
                    count,
                    "duplicate label in {algorithm:?} w{world}"
                );
            }
        }
    }

    #[test]
    fn grid_grows_with_size_up_to_the_pad_capacity() {
        let one = |elements, dtype| grid_blocks(elements, dtype, Algorithm::OneShot, 2);
        assert_eq!(one(1, Dtype::F32), 1);
        assert_eq!(one(4 * 512 * 3, Dtype::F32), 3);
        assert_eq!(one(1 << 30, Dtype::Bf16), MAX_BLOCKS as u32);
        // Two-shot: a rank's share of the vectors, and fewer blocks at most.
        let two = |elements, world| grid_blocks(elements, Dtype::F32, Algorithm::TwoShot, world);
        assert_eq!(two(1, 4), 1);
        assert_eq!(two(4 * 512 * 4, 2), 2);
        assert_eq!(two(4 * 512 * 4, 4), 1);
        assert_eq!(two(1 << 30, 2), TWO_SHOT_MAX_BLOCKS as u32);
    }
}
