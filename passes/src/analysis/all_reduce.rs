//! What decides an all-reduce kernel: algorithm, element type, reduction,
//! world size, vector width and epilogue (`AllReduceKernel`), and its
//! name, grid and vector width. `kernel_ir` builds the kernels.

pub use crate::ir::scalar::Scalar;
use std::fmt::Write;

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

impl Algorithm {
    /// The ODS enum's value (`#symm_mem` `AllReduceAlgorithm`: 0 is auto).
    pub fn code(self) -> i32 {
        match self {
            Algorithm::OneShot => 1,
            Algorithm::TwoShot => 2,
        }
    }
    /// `fixed_by` on melior's typed API.
    pub fn fixed_by_op(op: melior::ir::OperationRef) -> Option<Algorithm> {
        use crate::ir::melior_ext::OperationExt;
        Self::of_code(op.int_attribute("algorithm"))
    }
    /// The algorithm an `algorithm` attribute's value fixes (`None`: auto,
    /// or no attribute).
    pub fn of_code(code: Option<i64>) -> Option<Algorithm> {
        match code {
            Some(1) => Some(Algorithm::OneShot),
            Some(2) => Some(Algorithm::TwoShot),
            _ => None,
        }
    }
}

/// The reduction: the runtime ABI's codes, which are also the ODS enum's
/// case values.
pub use symm_protocol::abi::ReduceCode as Reduction;

/// One epilogue operand: its element type, and the row length in vectors
/// when it is a row-broadcast vector (a bias).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct EpilogueOperand {
    pub element: Scalar,
    pub broadcast_row_vectors: Option<u64>,
}

/// The scalar function (`func.func` in the same gpu.module) applied to each
/// reduced element and the epilogue operands' elements.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Epilogue {
    pub function: String,
    pub operands: Vec<EpilogueOperand>,
}

/// The row half of a fused `all_reduce_rows_out`: per row, each element
/// the epilogue wrote goes through `step` (`(element, f32 acc) -> f32`,
/// summed over the row), then `apply` (`(element, row total, operands...)
/// -> rows_out's element`). Rows are `columns` elements long.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RowsEpilogue {
    pub step: String,
    pub apply: String,
    pub operands: Vec<EpilogueOperand>,
    pub out_element: Scalar,
    pub columns: u64,
}

/// Largest message a rows kernel takes as a two-shot on 2 ranks; above,
/// the one-shot (on more ranks no bound: `Limits::rows_two_shot_max`).
/// Measured on 2x H200 in the Llama attention-output block (4096-wide
/// bf16 rows, bench/results/2026-11-23-norm-h200x2.md): the two-shot rows
/// kernel was 0.9 µs faster at 2 MB, 0.9 µs slower at 4 MB and 5.6 µs
/// slower at 8 MB (its second half runs every row in each block).
pub const ROWS_TWO_SHOT_MAX: u64 = 2 << 20;

/// Largest message a rows kernel takes as a Lamport one-shot on 2 ranks
/// (with the pass's own lamport-max-bytes below it; `rows-lamport-max-bytes`
/// sets another on every world size): 2 MiB, where the rows two-shot stops
/// (`ROWS_TWO_SHOT_MAX`), 256 rows of 4096 bf16 (a block a row, of at most
/// `MAX_BLOCKS`). Measured on 2x H200 in the Llama decoder half-layer,
/// whose two all-reduces are rows kernels: against the staged rows kernel
/// (33-64 rows) 1.0-2.0 µs faster per layer, against the barrier one-shot
/// (65-128 rows) 7.0-8.1 µs faster
/// (bench/results/2026-11-28-rows-lamport-h200x2.md); against the two-shot
/// (1-2 MiB: 129-256 rows of 4096, 103-204 of 5120) 6.5-8.8 µs faster
/// (bench/results/2026-11-28-lamport-2m-h200x2.md). (Before the Lamport
/// kernel sent all of a thread's vectors in one flight, it had been 0.2 µs
/// slower than the staged one at 64 rows:
/// bench/results/2026-11-23-rows-lamport-h200x2.md.)
pub const ROWS_LAMPORT_MAX: u64 = 2 << 20;

/// The same on more than 2 ranks: 32 rows of 4096 bf16. On 4x H200 the
/// TP-4 decoder half-layer with the Lamport rows kernel up to 1 MiB was
/// 0.8-1.3 µs slower at 33 rows than with the staged one and even at 64
/// (bench/results/2026-11-28-rows-lamport-h200x2.md, TP 4); a rows
/// one-shot runs only up to 512 KiB there (`Limits::one_shot_max`).
pub const ROWS_LAMPORT_MAX_MORE_RANKS: u64 = 256 << 10;

/// Longest row a rows kernel keeps in registers: two 16-byte vectors per
/// thread of a block.
pub const ROW_BYTES_MAX: u64 = 2 * THREADS * 16;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AllReduceKernel {
    pub algorithm: Algorithm,
    pub reduction: Reduction,
    /// `f32`, `f16` or `bf16`.
    pub element: Scalar,
    pub world: u64,
    /// Elements per vector access (16 bytes at most).
    pub vector: u64,
    pub epilogue: Option<Epilogue>,
    /// One-shot through the pool's staging slots: one barrier of posted
    /// counter increments instead of two CAS barriers (see `staged_prologue`).
    pub staged: bool,
    /// One-shot without a barrier: the data is its own signal (see
    /// `kernel_ir::lamport`). 16-bit float sums only.
    pub lamport: bool,
    /// Two-shot that stores reduced chunks into the peers' buffers instead
    /// of reading them back after a middle barrier (see `push_two_shot_body`).
    pub push: Option<Push>,
    /// Takes an element count instead of a vector count and reduces the
    /// elements after the last whole vector as scalars (the runtime's
    /// library kernels, whose callers pass any count). No epilogue.
    pub tail: bool,
    /// A row statistic after the epilogue (which it requires): the kernel
    /// takes a row count instead of a vector count, and a block handles
    /// whole rows.
    pub rows: Option<RowsEpilogue>,
    /// The rank's contribution is the f32 sum of this many split-K slices
    /// of a matmul (`symm_mem.all_reduce_epilogue_out`'s prologue), read
    /// from a `partials` parameter where the kernel reads its own data; a
    /// barrier one-shot first stores the sums into its input for its peers.
    /// One-shots without a tail only.
    pub split_k: Option<u64>,
    /// A split-K Lamport kernel whose slices a generated matmul may send
    /// itself (`symm-mem-expand-collectives`' lamport-send): it sends them
    /// one by one where they fit a region, and reads the stamp that says a
    /// matmul sent them (`kernel_ir::lamport`).
    pub matmul_sends: bool,
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

/// The widest vector of at most 16 bytes whose length divides every
/// length in `counts` (element counts that vectors must tile exactly).
pub fn vector_width(element_bytes: u64, counts: &[u64]) -> u64 {
    let mut width = (16 / element_bytes).max(1);
    while width > 1 && counts.iter().any(|count| count % width != 0) {
        width /= 2;
    }
    width
}

/// Most blocks of a kernel of `algorithm`: a two-shot one per SM (its
/// loops keep 4 vectors in flight per thread), as the runtime's.
pub fn most_blocks(algorithm: Algorithm) -> u64 {
    match algorithm {
        Algorithm::OneShot => MAX_BLOCKS,
        Algorithm::TwoShot => symm_protocol::TWO_SHOT_MAX_BLOCKS as u64,
    }
}

impl AllReduceKernel {
    /// The kernel in words, for remarks: its form, and the split-K
    /// slices it sums.
    pub fn describe(&self) -> String {
        let form = match (self.algorithm, self.lamport, self.staged, self.push) {
            (Algorithm::OneShot, true, _, _) => "the Lamport one-shot",
            (Algorithm::OneShot, _, true, _) => "the staged one-shot",
            (Algorithm::OneShot, ..) => "the one-shot between barriers",
            (Algorithm::TwoShot, _, _, Some(Push::IntoOutputs)) => {
                "the two-shot pushing into the peers' outputs"
            }
            (Algorithm::TwoShot, _, _, Some(Push::IntoInputs)) => {
                "the two-shot pushing into the peers' inputs"
            }
            (Algorithm::TwoShot, ..) => "the two-shot",
        };
        match self.split_k {
            Some(slices) => format!("{form} summing {slices} split-K slices"),
            None => form.to_owned(),
        }
    }

    /// Threads per block: the Lamport one-shot's own size
    /// (`symm_protocol::LAMPORT_THREADS`), else `THREADS` (a rows kernel's
    /// block takes a row, Lamport or not).
    pub fn threads(&self) -> u64 {
        if self.lamport && self.rows.is_none() {
            u64::from(symm_protocol::LAMPORT_THREADS)
        } else {
            THREADS
        }
    }

    /// Thread blocks for `vectors` vector accesses of one rank: one per
    /// thread's vector up to `most_blocks` (the runtime's rule,
    /// `symm_protocol::library::grid_blocks`, at this kernel's block size).
    pub fn grid_blocks(&self, vectors: u64) -> u64 {
        symm_protocol::library::grid_blocks(
            vectors as usize,
            self.threads() as usize,
            self.most_blocks() as usize,
        ) as u64
    }

    /// Whether this kernel lets the next grid launch as it starts (for
    /// calls of at most `early_rows` rows; 0: never): only a rows kernel,
    /// whose rows a matmul reads next (`AllReduceKernel::build`).
    pub fn launches_early(&self, early_rows: u64) -> bool {
        early_rows > 0 && self.rows.is_some()
    }

    /// Most blocks of this kernel's grid: a rows kernel's block handles
    /// whole rows, one block reduction each, so it takes every channel.
    pub fn most_blocks(&self) -> u64 {
        if self.rows.is_some() {
            MAX_BLOCKS
        } else {
            most_blocks(self.algorithm)
        }
    }

    pub fn name(&self) -> String {
        let algorithm = match (self.algorithm, self.staged) {
            (Algorithm::OneShot, _) if self.lamport => "one_shot_lamport",
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
        if let Some(rows) = &self.rows {
            let _ = write!(name, "_rows_{}", rows.apply);
        }
        if let Some(slices) = self.split_k {
            let _ = write!(name, "_splitk{slices}");
        }
        if self.matmul_sends {
            name.push_str("_sent");
        }
        if self.tail {
            name.push_str("_tail");
        }
        name
    }
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

    /// A plain bf16 kernel (8 lanes): no epilogue, staging, push or tail.
    fn plain(algorithm: Algorithm, reduction: Reduction, world: u64) -> AllReduceKernel {
        AllReduceKernel {
            algorithm,
            reduction,
            element: Scalar::Bf16,
            world,
            vector: 8,
            epilogue: None,
            staged: false,
            lamport: false,
            push: None,
            tail: false,
            split_k: None,
            matmul_sends: false,
            rows: None,
        }
    }

    #[test]
    fn grid_is_one_vector_per_thread_up_to_the_pad_channels() {
        let kernel = |algorithm| plain(algorithm, Reduction::Sum, 2);
        let (one_shot, two_shot) = (kernel(Algorithm::OneShot), kernel(Algorithm::TwoShot));
        assert_eq!(one_shot.grid_blocks(1), 1);
        assert_eq!(one_shot.grid_blocks(THREADS + 1), 2);
        assert_eq!(one_shot.grid_blocks(1 << 30), MAX_BLOCKS);
        assert_eq!(two_shot.grid_blocks(1 << 30), MAX_BLOCKS / 2);
    }

    #[test]
    fn names_carry_every_specialization() {
        let kernel = plain(Algorithm::TwoShot, Reduction::Max, 4);
        assert_eq!(kernel.name(), "symm_two_shot_max_bf16_w4_v8");
    }
}
