//! The all-reduce kernels as `gpu.func`s, specialized by algorithm,
//! element type, reduction, world size, vector width and epilogue.
//!
//! They are written out as MLIR (gpu, scf, arith and llvm ops) and parsed
//! into the module, which keeps each kernel readable as one piece. The
//! signal-pad protocol is the runtime's (`symm-protocol`), so
//! compiled and library collectives can share pools: slot
//! `pad[block * MAX_WORLD + peer]`, put = CAS 0->1 with release, wait =
//! CAS 1->0 with acquire, both at system scope; slots return to 0, so
//! CUDA-graph replays need no reset. A wait gives up after the timeout and
//! sets the error flag, which the runtime reports when the function exits.

use std::fmt::Write;
use symm_protocol::Descriptor;

/// The runtime's pad layout (`symm-protocol`), as the i64s the kernels use.
pub const MAX_WORLD: u64 = symm_protocol::MAX_WORLD as u64;
/// Messages up to this many bytes take the staged one-shot.
pub const STAGING_MAX: u64 = symm_protocol::STAGING_MAX as u64;
pub const MAX_BLOCKS: u64 = symm_protocol::MAX_BLOCKS as u64;
pub const THREADS: u64 = symm_protocol::THREADS as u64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Algorithm {
    OneShot,
    TwoShot,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reduction {
    Sum,
    Max,
    Min,
}

impl Reduction {
    fn op(self) -> &'static str {
        match self {
            Self::Sum => "arith.addf",
            Self::Max => "arith.maxnumf",
            Self::Min => "arith.minnumf",
        }
    }
}

/// One epilogue operand: its element type, and the row length in vectors
/// when it is a row-broadcast vector (a bias).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EpilogueOperand {
    pub element: String,
    pub broadcast_row_vectors: Option<u64>,
}

/// The scalar function (`func.func` in the same gpu.module) applied to each
/// reduced element and the epilogue operands' elements.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Epilogue {
    pub function: String,
    pub operands: Vec<EpilogueOperand>,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AllReduceKernel {
    pub algorithm: Algorithm,
    pub reduction: Reduction,
    /// `f32`, `f16` or `bf16`.
    pub element: String,
    pub world: u64,
    /// Elements per vector access (16 bytes at most).
    pub vector: u64,
    pub epilogue: Option<Epilogue>,
    /// One-shot through the pool's staging slots: one barrier of posted
    /// counter increments instead of two CAS barriers (see `staged_prologue`).
    pub staged: bool,
    /// Two-shot that stores reduced chunks into the peers' buffers instead
    /// of reading them back after a middle barrier (see `push_two_shot_body`).
    pub push: Option<Push>,
}

/// Where a push two-shot stores the reduced chunks.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Push {
    /// Into the peers' inputs (nothing reads them afterwards); each rank
    /// then runs the chunks it received through its epilogue into `out`.
    IntoInputs,
    /// Straight into the peers' outputs (symmetric too, at the same offset
    /// of their pool); no epilogue, nothing to copy afterwards.
    IntoOutputs,
}

/// Bytes of a float element type.
pub fn element_bytes(element: &str) -> Option<u64> {
    match element {
        "f32" | "i32" => Some(4),
        "f16" | "bf16" | "i16" => Some(2),
        "f64" | "i64" => Some(8),
        "i8" => Some(1),
        _ => None,
    }
}

/// The widest vector of at most 16 bytes whose length divides every
/// length in `counts` (element counts that vectors must tile exactly).
pub fn vector_width(element_bytes: u64, counts: &[u64]) -> u64 {
    let mut width = (16 / element_bytes).max(1);
    while width > 1 && counts.iter().any(|count| count % width != 0) {
        width /= 2;
    }
    width
}

/// Thread blocks for `vectors` vector accesses of one rank: one per
/// thread, at most one per signal-pad channel. (The runtime caps its
/// two-shot at `TWO_SHOT_MAX_BLOCKS`; these kernels keep one vector in
/// flight per thread, not four, and lost 2.5% at 32 MiB with that cap.)
pub fn grid_blocks(vectors: u64) -> u64 {
    vectors.div_ceil(THREADS).clamp(1, MAX_BLOCKS)
}

impl AllReduceKernel {
    pub fn name(&self) -> String {
        let algorithm = match (self.algorithm, self.staged) {
            (Algorithm::OneShot, true) => "one_shot_staged",
            (Algorithm::OneShot, false) => "one_shot",
            (Algorithm::TwoShot, _) if self.push == Some(Push::IntoOutputs) => "two_shot_push_out",
            (Algorithm::TwoShot, _) if self.push.is_some() => "two_shot_push",
            (Algorithm::TwoShot, _) => "two_shot",
        };
        let reduction = format!("{:?}", self.reduction).to_lowercase();
        let mut name = format!(
            "symm_{algorithm}_{reduction}_{}_w{}_v{}",
            self.element, self.world, self.vector
        );
        if let Some(epilogue) = &self.epilogue {
            let _ = write!(name, "_{}", epilogue.function);
        }
        name
    }

    fn vector_type(&self, element: &str) -> String {
        format!("vector<{}x{element}>", self.vector)
    }

    /// The `gpu.func` text. Parameters: the input's pool descriptor
    /// (`symm_protocol::Descriptor`), the input, the output, vector count,
    /// rank, timeout (ns), error flag, for `Push::IntoOutputs` the output's
    /// pool descriptor, then one pointer per epilogue operand.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut extra: String = if self.push == Some(Push::IntoOutputs) {
            ", %out_desc: !llvm.ptr".to_owned()
        } else {
            String::new()
        };
        extra.extend(
            self.epilogue
                .iter()
                .flat_map(|e| e.operands.iter().enumerate())
                .map(|(index, _)| format!(", %e{index}: !llvm.ptr")),
        );
        let _ = write!(
            out,
            "gpu.func @{name}(%desc: !llvm.ptr, %in: !llvm.ptr, %out: !llvm.ptr, \
             %nvec: i64, %rank32: i32, %timeout: i64, %err: !llvm.ptr{extra}) kernel \
             attributes {{gpu.known_block_size = array<i32: {THREADS}, 1, 1>}} {{
  %tid_i = gpu.thread_id x
  %bid_i = gpu.block_id x
  %gdim_i = gpu.grid_dim x
  %tid = arith.index_cast %tid_i : index to i64
  %bid = arith.index_cast %bid_i : index to i64
  %gdim = arith.index_cast %gdim_i : index to i64
  %threads = arith.constant {THREADS} : i64
  %gstart = arith.muli %bid, %threads : i64
  %gtid = arith.addi %gstart, %tid : i64
  %stride = arith.muli %gdim, %threads : i64
  %rank = arith.extui %rank32 : i32 to i64
  %true = arith.constant true
  %zero32 = arith.constant 0 : i32
  %one32 = arith.constant 1 : i32
  %max_world = arith.constant {MAX_WORLD} : i64
  %world = arith.constant {world} : i64
  %channel = arith.muli %bid, %max_world : i64
  %pads_at = llvm.getelementptr %desc[{pads}] : (!llvm.ptr) -> !llvm.ptr, i64
  %pads = llvm.load %pads_at : !llvm.ptr -> !llvm.ptr
",
            name = self.name(),
            world = self.world,
            pads = Descriptor::Pads as u64,
        );
        self.peer_addresses(&mut out, "%desc", "%in", "", "%src");
        if self.staged {
            self.staged_prologue(&mut out);
            counter_barrier(&mut out);
            out.push_str("  scf.for %i = %gtid to %nvec step %stride : i64 {\n");
            let reduced = self.reduce(&mut out, "%staged");
            self.store(&mut out, &reduced);
            out.push_str("  }\n");
            bump_epoch(&mut out);
            out.push_str("  gpu.return\n}\n");
            return out;
        }
        barrier(&mut out, "entry");
        match self.algorithm {
            Algorithm::OneShot => {
                out.push_str("  scf.for %i = %gtid to %nvec step %stride : i64 {\n");
                let reduced = self.reduce(&mut out, "%src");
                self.store(&mut out, &reduced);
                out.push_str("  }\n");
            }
            Algorithm::TwoShot if self.push.is_some() => {
                self.push_two_shot_body(&mut out);
                out.push_str("  gpu.return\n}\n");
                return out;
            }
            Algorithm::TwoShot => self.two_shot_body(&mut out),
        }
        barrier(&mut out, "exit");
        out.push_str("  gpu.return\n}\n");
        out
    }

    /// The chunk bounds of every two-shot: `%chunk` vectors per rank and
    /// this rank's `[%mine_start, %mine_hi)` by `%stride`.
    fn chunk_bounds(out: &mut String) {
        out.push_str(
            "  %one64 = arith.constant 1 : i64
  %wm1 = arith.subi %world, %one64 : i64
  %chunk_up = arith.addi %nvec, %wm1 : i64
  %chunk = arith.divui %chunk_up, %world : i64
  %mine_lo = arith.muli %rank, %chunk : i64
  %mine_hi_raw = arith.addi %mine_lo, %chunk : i64
  %mine_hi = arith.minui %mine_hi_raw, %nvec : i64
  %mine_start = arith.addi %mine_lo, %gtid : i64
",
        );
    }

    /// Every rank's address of the buffer that is `local` here, in the pool
    /// of descriptor `desc`: `{target}{p}` for rank p. The offset in the
    /// pool is the same on every rank: `local` minus this rank's base. Also
    /// defines `%{prefix}bases` (the table), `%{prefix}base{p}` (rank p's
    /// pool), `%{prefix}own_base` and `%{prefix}offset`.
    fn peer_addresses(
        &self,
        out: &mut String,
        desc: &str,
        local: &str,
        prefix: &str,
        target: &str,
    ) {
        let _ = write!(
            out,
            "  %{prefix}bases_at = llvm.getelementptr {desc}[{bases}] : (!llvm.ptr) -> !llvm.ptr, i64
  %{prefix}bases = llvm.load %{prefix}bases_at : !llvm.ptr -> !llvm.ptr
  %{prefix}own_at = llvm.getelementptr %{prefix}bases[%rank] : (!llvm.ptr, i64) -> !llvm.ptr, i64
  %{prefix}own_base = llvm.load %{prefix}own_at : !llvm.ptr -> !llvm.ptr
  %{prefix}local_i = llvm.ptrtoint {local} : !llvm.ptr to i64
  %{prefix}own_i = llvm.ptrtoint %{prefix}own_base : !llvm.ptr to i64
  %{prefix}offset = arith.subi %{prefix}local_i, %{prefix}own_i : i64
",
            bases = Descriptor::Bases as u64
        );
        for peer in 0..self.world {
            let _ = write!(
                out,
                "  %{prefix}slot{peer} = llvm.getelementptr %{prefix}bases[{peer}] : (!llvm.ptr) -> !llvm.ptr, i64
  %{prefix}base{peer} = llvm.load %{prefix}slot{peer} : !llvm.ptr -> !llvm.ptr
  {target}{peer} = llvm.getelementptr %{prefix}base{peer}[%{prefix}offset] : (!llvm.ptr, i64) -> !llvm.ptr, i8
"
            );
        }
    }

    /// Push two-shot: this rank reduces its chunk, writes it (through the
    /// epilogue) to `out` and stores the reduced vectors into every peer's
    /// buffer at the same place: with `Push::IntoOutputs` their output, and
    /// that is all; with `Push::IntoInputs` their input, and after the
    /// closing barrier each rank runs the chunks its peers pushed into its
    /// own input through the epilogue into `out`. Each input byte crosses
    /// NVLink once per direction and no barrier sits between the halves.
    /// Each block copies exactly the vectors the peers' same-numbered
    /// blocks pushed, so its own barrier channel is the only wait. Inputs
    /// are overwritten.
    fn push_two_shot_body(&self, out: &mut String) {
        let vector = self.vector_type(&self.element);
        let align = self.alignment(&self.element);
        Self::chunk_bounds(out);
        for peer in 0..self.world {
            let _ = writeln!(
                out,
                "  %c_peer{peer} = arith.constant {peer} : i64\n  %not_me{peer} = arith.cmpi ne, %rank, %c_peer{peer} : i64"
            );
        }
        let into_outputs = self.push == Some(Push::IntoOutputs);
        let target = if into_outputs { "%dst" } else { "%src" };
        if into_outputs {
            self.peer_addresses(out, "%out_desc", "%out", "out_", "%dst");
        }
        out.push_str("  scf.for %i = %mine_start to %mine_hi step %stride : i64 {\n");
        let reduced = self.reduce(out, "%src");
        for peer in 0..self.world {
            let _ = write!(
                out,
                "    scf.if %not_me{peer} {{
      %push{peer} = llvm.getelementptr {target}{peer}[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {vector}
      llvm.store {reduced}, %push{peer} {{alignment = {align} : i64}} : {vector}, !llvm.ptr
    }}
"
            );
        }
        self.store(out, &reduced);
        out.push_str("  }\n");
        barrier(out, "pushed");
        if into_outputs {
            return;
        }
        for peer in 0..self.world {
            let _ = write!(
                out,
                "  scf.if %not_me{peer} {{
    %lo{peer} = arith.muli %c_peer{peer}, %chunk : i64
    %hi_raw{peer} = arith.addi %lo{peer}, %chunk : i64
    %hi{peer} = arith.minui %hi_raw{peer}, %nvec : i64
    %start{peer} = arith.addi %lo{peer}, %gtid : i64
    scf.for %i = %start{peer} to %hi{peer} step %stride : i64 {{
      %gp = llvm.getelementptr %in[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {vector}
      %gathered = llvm.load %gp {{alignment = {align} : i64}} : !llvm.ptr -> {vector}
"
            );
            self.store(out, "%gathered");
            out.push_str("    }\n  }\n");
        }
    }

    /// The staged one-shot's start: reads this block's call counter
    /// (`%epoch`), picks the staging slot of its parity (`%staged{p}`: that
    /// slot in rank p's copy of the pool) and copies this block's vectors
    /// of the input there. No closing barrier is needed: a block writes
    /// slot s on its n-th call and peers read it on their n-th call; their
    /// reads of s on call n-2 ended before their call n-1 signalled this
    /// block, which it waited for before call n began.
    fn staged_prologue(&self, out: &mut String) {
        let vector = self.vector_type(&self.element);
        let align = self.alignment(&self.element);
        let _ = write!(
            out,
            "  %staging_at = llvm.getelementptr %desc[{staging}] : (!llvm.ptr) -> !llvm.ptr, i64
  %staging = llvm.load %staging_at : !llvm.ptr -> i64
  %slot_at = llvm.getelementptr %desc[{slot}] : (!llvm.ptr) -> !llvm.ptr, i64
  %slot_bytes = llvm.load %slot_at : !llvm.ptr -> i64
  %epochs_at = llvm.getelementptr %desc[{epochs}] : (!llvm.ptr) -> !llvm.ptr, i64
  %epochs = llvm.load %epochs_at : !llvm.ptr -> !llvm.ptr
  %epoch_at = llvm.getelementptr %epochs[%bid] : (!llvm.ptr, i64) -> !llvm.ptr, i32
  %epoch = llvm.load %epoch_at : !llvm.ptr -> i32
  %epoch64 = arith.extui %epoch : i32 to i64
  %one_e = arith.constant 1 : i64
  %parity = arith.andi %epoch64, %one_e : i64
  %parity_bytes = arith.muli %parity, %slot_bytes : i64
  %slot_offset = arith.addi %staging, %parity_bytes : i64
",
            staging = Descriptor::Staging as u64,
            slot = Descriptor::Slot as u64,
            epochs = Descriptor::Epochs as u64,
        );
        let _ = write!(
            out,
            "  %mine_slot = llvm.getelementptr %own_base[%slot_offset] : (!llvm.ptr, i64) -> !llvm.ptr, i8
  scf.for %i = %gtid to %nvec step %stride : i64 {{
    %in_at = llvm.getelementptr %in[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {vector}
    %in_v = llvm.load %in_at {{alignment = {align} : i64}} : !llvm.ptr -> {vector}
    %stage_at = llvm.getelementptr %mine_slot[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {vector}
    llvm.store %in_v, %stage_at {{alignment = {align} : i64}} : {vector}, !llvm.ptr
  }}
"
        );
        for peer in 0..self.world {
            let _ = writeln!(
                out,
                "  %staged{peer} = llvm.getelementptr %base{peer}[%slot_offset] : (!llvm.ptr, i64) -> !llvm.ptr, i8"
            );
        }
    }

    /// For vector `%i`: loads every rank's vector (at `{source}{rank}`,
    /// e.g. `%src0`) and reduces them in rank order (16-bit types in f32,
    /// rounded back); returns the value's name.
    fn reduce(&self, out: &mut String, source: &str) -> String {
        let element = &self.element;
        let vector = self.vector_type(element);
        let wide = self.vector_type("f32");
        let widen = element != "f32";
        let mut terms = Vec::new();
        for peer in 0..self.world {
            let _ = write!(
                out,
                "    %p{peer} = llvm.getelementptr {source}{peer}[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {vector}
    %v{peer} = llvm.load %p{peer} {{alignment = {align} : i64}} : !llvm.ptr -> {vector}
",
                align = self.alignment(element)
            );
            if widen {
                let _ = writeln!(
                    out,
                    "    %w{peer} = arith.extf %v{peer} : {vector} to {wide}"
                );
                terms.push(format!("%w{peer}"));
            } else {
                terms.push(format!("%v{peer}"));
            }
        }
        let mut acc = terms[0].clone();
        for (peer, term) in terms.iter().enumerate().skip(1) {
            let _ = writeln!(
                out,
                "    %acc{peer} = {op} {acc}, {term} : {wide}",
                op = self.reduction.op()
            );
            acc = format!("%acc{peer}");
        }
        if !widen {
            return acc;
        }
        let _ = writeln!(
            out,
            "    %reduced = arith.truncf {acc} : {wide} to {vector}"
        );
        "%reduced".to_owned()
    }

    fn alignment(&self, element: &str) -> u64 {
        self.vector * element_bytes(element).unwrap_or(1)
    }

    /// Stores `value` (a vector of the element type) at `%out[%i]`, through
    /// the epilogue when there is one.
    fn store(&self, out: &mut String, value: &str) {
        let vector = self.vector_type(&self.element);
        let mut result = value.to_owned();
        if let Some(epilogue) = &self.epilogue {
            for (index, operand) in epilogue.operands.iter().enumerate() {
                let operand_vector = self.vector_type(&operand.element);
                let position = match operand.broadcast_row_vectors {
                    Some(row) => {
                        let _ = writeln!(
                            out,
                            "    %row{index} = arith.constant {row} : i64\n    %at{index} = arith.remui %i, %row{index} : i64"
                        );
                        format!("%at{index}")
                    }
                    None => "%i".to_owned(),
                };
                let _ = write!(
                    out,
                    "    %ep{index} = llvm.getelementptr %e{index}[{position}] : (!llvm.ptr, i64) -> !llvm.ptr, {operand_vector}
    %ev{index} = llvm.load %ep{index} {{alignment = {align} : i64}} : !llvm.ptr -> {operand_vector}
",
                    align = self.alignment(&operand.element)
                );
            }
            let signature: Vec<String> = std::iter::once(self.element.clone())
                .chain(epilogue.operands.iter().map(|o| o.element.clone()))
                .collect();
            let mut lanes = format!("%lanes_init_{}", self.vector);
            let _ = writeln!(out, "    {lanes} = llvm.mlir.poison : {vector}");
            for lane in 0..self.vector {
                let _ = writeln!(out, "    %lane{lane} = arith.constant {lane} : i32");
                let mut args = vec![format!("%r{lane}")];
                let _ = writeln!(
                    out,
                    "    %r{lane} = llvm.extractelement {value}[%lane{lane} : i32] : {vector}"
                );
                for (index, operand) in epilogue.operands.iter().enumerate() {
                    let _ = writeln!(
                        out,
                        "    %x{index}_{lane} = llvm.extractelement %ev{index}[%lane{lane} : i32] : {}",
                        self.vector_type(&operand.element)
                    );
                    args.push(format!("%x{index}_{lane}"));
                }
                let _ = write!(
                    out,
                    "    %y{lane} = func.call @{f}({args}) : ({types}) -> {element}
    %lanes{lane} = llvm.insertelement %y{lane}, {lanes}[%lane{lane} : i32] : {vector}
",
                    f = epilogue.function,
                    args = args.join(", "),
                    types = signature.join(", "),
                    element = self.element,
                );
                lanes = format!("%lanes{lane}");
            }
            result = lanes;
        }
        let _ = write!(
            out,
            "    %q = llvm.getelementptr %out[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {vector}
    llvm.store {result}, %q {{alignment = {align} : i64}} : {vector}, !llvm.ptr
",
            align = self.alignment(&self.element)
        );
    }

    /// Reduce-scatter: this rank reduces its slice and leaves the rounded
    /// result in its own pool copy (for peers) and in `out`; after a
    /// barrier, it copies every peer's reduced slice. A vector's slice
    /// position is handled by the same block on every rank, so the
    /// per-block barrier orders each read after the peer's write.
    fn two_shot_body(&self, out: &mut String) {
        let vector = self.vector_type(&self.element);
        let align = self.alignment(&self.element);
        Self::chunk_bounds(out);
        out.push_str("  scf.for %i = %mine_start to %mine_hi step %stride : i64 {\n");
        let reduced = self.reduce(out, "%src");
        let _ = write!(
            out,
            "    %own = llvm.getelementptr %in[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {vector}
    llvm.store {reduced}, %own {{alignment = {align} : i64}} : {vector}, !llvm.ptr
"
        );
        self.store(out, &reduced);
        out.push_str("  }\n");
        barrier(out, "gather");
        for peer in 0..self.world {
            let _ = write!(
                out,
                "  %c_peer{peer} = arith.constant {peer} : i64
  %not_me{peer} = arith.cmpi ne, %rank, %c_peer{peer} : i64
  scf.if %not_me{peer} {{
    %lo{peer} = arith.muli %c_peer{peer}, %chunk : i64
    %hi_raw{peer} = arith.addi %lo{peer}, %chunk : i64
    %hi{peer} = arith.minui %hi_raw{peer}, %nvec : i64
    %start{peer} = arith.addi %lo{peer}, %gtid : i64
    scf.for %i = %start{peer} to %hi{peer} step %stride : i64 {{
      %gp = llvm.getelementptr %src{peer}[%i] : (!llvm.ptr, i64) -> !llvm.ptr, {vector}
      %gathered = llvm.load %gp {{alignment = {align} : i64}} : !llvm.ptr -> {vector}
"
            );
            self.store(out, "%gathered");
            out.push_str("    }\n  }\n");
        }
    }
}

/// A barrier of this block's channel with every peer: threads 0..W each
/// put to one peer's pad and wait on their own slot for that peer.
fn barrier(out: &mut String, label: &str) {
    let _ = write!(
        out,
        "  gpu.barrier
  %{label}_lane = arith.cmpi ult, %tid, %world : i64
  scf.if %{label}_lane {{
    %{label}_peer_pad_at = llvm.getelementptr %pads[%tid] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %{label}_peer_pad = llvm.load %{label}_peer_pad_at : !llvm.ptr -> !llvm.ptr
    %{label}_put_index = arith.addi %channel, %rank : i64
    %{label}_put = llvm.getelementptr %{label}_peer_pad[%{label}_put_index] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %{label}_own_pad_at = llvm.getelementptr %pads[%rank] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %{label}_own_pad = llvm.load %{label}_own_pad_at : !llvm.ptr -> !llvm.ptr
    %{label}_wait_index = arith.addi %channel, %tid : i64
    %{label}_wait = llvm.getelementptr %{label}_own_pad[%{label}_wait_index] : (!llvm.ptr, i64) -> !llvm.ptr, i32
"
    );
    spin(out, &format!("{label}_put"), "release", "%zero32", "%one32");
    spin(
        out,
        &format!("{label}_wait"),
        "acquire",
        "%one32",
        "%zero32",
    );
    out.push_str("  }\n  gpu.barrier\n");
}

/// The staged one-shot's barrier: threads 0..W each post a release add of
/// 1 to one peer's counter for (channel, me), then spin with acquire loads
/// until our counter for (channel, that peer) reaches `%epoch` + 1
/// (compared modulo 2^32, so counters never need a reset).
fn counter_barrier(out: &mut String) {
    let _ = write!(
        out,
        "  gpu.barrier
  %cb_lane = arith.cmpi ult, %tid, %world : i64
  scf.if %cb_lane {{
    %cb_peer_pad_at = llvm.getelementptr %pads[%tid] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %cb_peer_pad = llvm.load %cb_peer_pad_at : !llvm.ptr -> !llvm.ptr
    %cb_peer_counters = llvm.getelementptr %cb_peer_pad[{counters}] : (!llvm.ptr) -> !llvm.ptr, i8
    %cb_put_index = arith.addi %channel, %rank : i64
    %cb_put = llvm.getelementptr %cb_peer_counters[%cb_put_index] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    llvm.inline_asm has_side_effects \"red.release.sys.global.add.u32 [$0], 1;\", \"l,~{{memory}}\" %cb_put : (!llvm.ptr) -> ()
    %cb_own_pad_at = llvm.getelementptr %pads[%rank] : (!llvm.ptr, i64) -> !llvm.ptr, i64
    %cb_own_pad = llvm.load %cb_own_pad_at : !llvm.ptr -> !llvm.ptr
    %cb_own_counters = llvm.getelementptr %cb_own_pad[{counters}] : (!llvm.ptr) -> !llvm.ptr, i8
    %cb_wait_index = arith.addi %channel, %tid : i64
    %cb_wait = llvm.getelementptr %cb_own_counters[%cb_wait_index] : (!llvm.ptr, i64) -> !llvm.ptr, i32
    %cb_target = arith.addi %epoch, %one32 : i32
    %cb_start = llvm.inline_asm has_side_effects \"mov.u64 $0, %globaltimer;\", \"=l\" : () -> i64
    scf.while : () -> () {{
      %cb_seen = llvm.inline_asm has_side_effects \"ld.acquire.sys.global.u32 $0, [$1];\", \"=r,l,~{{memory}}\" %cb_wait : (!llvm.ptr) -> i32
      %cb_ahead = arith.subi %cb_seen, %cb_target : i32
      %cb_done = arith.cmpi sge, %cb_ahead, %zero32 : i32
      %cb_now = llvm.inline_asm has_side_effects \"mov.u64 $0, %globaltimer;\", \"=l\" : () -> i64
      %cb_spent = arith.subi %cb_now, %cb_start : i64
      %cb_late = arith.cmpi ugt, %cb_spent, %timeout : i64
      scf.if %cb_late {{
        llvm.store %one32, %err : i32, !llvm.ptr
      }}
      %cb_stop = arith.ori %cb_done, %cb_late : i1
      %cb_more = arith.xori %cb_stop, %true : i1
      scf.condition(%cb_more)
    }} do {{
      scf.yield
    }}
  }}
  gpu.barrier
",
        counters = symm_protocol::CAS_BYTES
    );
}

/// After the staged one-shot's reads: the block's next call uses the other
/// staging slot.
fn bump_epoch(out: &mut String) {
    out.push_str(
        "  gpu.barrier
  %zero64_e = arith.constant 0 : i64
  %first_thread = arith.cmpi eq, %tid, %zero64_e : i64
  scf.if %first_thread {
    %next_epoch = arith.addi %epoch, %one32 : i32
    llvm.store %next_epoch, %epoch_at : i32, !llvm.ptr
  }
",
    );
}

/// Spins on a CAS of slot `%{label}` from `from` to `to` until it succeeds
/// or the timeout passes (then sets the error flag).
fn spin(out: &mut String, label: &str, semantics: &str, from: &str, to: &str) {
    let _ = write!(
        out,
        "    %{label}_start = llvm.inline_asm has_side_effects \"mov.u64 $0, %globaltimer;\", \"=l\" : () -> i64
    scf.while : () -> () {{
      %{label}_old = llvm.inline_asm has_side_effects \"atom.{semantics}.sys.cas.b32 $0, [$1], $2, $3;\", \"=r,l,r,r,~{{memory}}\" %{label}, {from}, {to} : (!llvm.ptr, i32, i32) -> i32
      %{label}_done = arith.cmpi eq, %{label}_old, {from} : i32
      %{label}_now = llvm.inline_asm has_side_effects \"mov.u64 $0, %globaltimer;\", \"=l\" : () -> i64
      %{label}_spent = arith.subi %{label}_now, %{label}_start : i64
      %{label}_late = arith.cmpi ugt, %{label}_spent, %timeout : i64
      scf.if %{label}_late {{
        llvm.store %one32, %err : i32, !llvm.ptr
      }}
      %{label}_stop = arith.ori %{label}_done, %{label}_late : i1
      %{label}_more = arith.xori %{label}_stop, %true : i1
      scf.condition(%{label}_more)
    }} do {{
      scf.yield
    }}
"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vector_width_tiles_every_count() {
        assert_eq!(vector_width(2, &[4096]), 8);
        assert_eq!(vector_width(4, &[4096]), 4);
        assert_eq!(vector_width(2, &[4096, 12]), 4);
        assert_eq!(vector_width(2, &[7]), 1);
        assert_eq!(vector_width(8, &[10]), 2);
    }

    #[test]
    fn grid_is_one_vector_per_thread_up_to_the_pad_channels() {
        assert_eq!(grid_blocks(1), 1);
        assert_eq!(grid_blocks(THREADS + 1), 2);
        assert_eq!(grid_blocks(1 << 30), MAX_BLOCKS);
    }

    #[test]
    fn names_carry_every_specialization() {
        let kernel = AllReduceKernel {
            algorithm: Algorithm::TwoShot,
            reduction: Reduction::Max,
            element: "bf16".into(),
            world: 4,
            vector: 8,
            epilogue: None,
            staged: false,
            push: None,
        };
        assert_eq!(kernel.name(), "symm_two_shot_max_bf16_w4_v8");
    }
}
