//! The runtime's library kernels: which ones the compiler generates for it
//! (`all`), under which keys the runtime looks them up, and the grid they
//! run on. `symm-kernels` builds each with the compiler's own kernel IR and
//! pipeline and commits the PTX under `runtime/kernels/`, with a table of
//! [`Entry`]s; the runtime embeds that table.

use crate::abi::{DtypeCode, ReduceCode};
use crate::{LAMPORT_MAX, LAMPORT_THREADS, MAX_BLOCKS, MAX_WORLD, THREADS, TWO_SHOT_MAX_BLOCKS};

/// The all-reduce algorithms of the library.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// One-shot through the pool's staging slots (one counter barrier), for
    /// inputs that fit a slot.
    OneShotStaged,
    /// One-shot: every rank reads every peer's input, between two barriers.
    OneShot,
    /// Two-shot: each rank reduces its chunk and pushes it into the peers'
    /// inputs; `out` may be the input (in place: nothing is copied after).
    TwoShot,
    /// The Lamport one-shot (bf16 and f16 sums of whole vectors, up to the
    /// buffer's Lamport region): no barrier, the data is its own signal.
    /// One vector per thread of `LAMPORT_THREADS`-thread blocks, every
    /// vector in the block of its index, so its grid is never capped; `out`
    /// may be the input.
    Lamport,
}

impl Variant {
    pub const ALL: [Variant; 4] = [
        Variant::OneShotStaged,
        Variant::OneShot,
        Variant::TwoShot,
        Variant::Lamport,
    ];

    /// Most blocks of its grid: a two-shot keeps several vectors in flight
    /// per thread and takes one block per SM.
    pub const fn most_blocks(self) -> usize {
        match self {
            Variant::TwoShot => TWO_SHOT_MAX_BLOCKS,
            _ => MAX_BLOCKS,
        }
    }

    /// Threads per block.
    pub const fn threads(self) -> u32 {
        match self {
            Variant::Lamport => LAMPORT_THREADS,
            _ => THREADS,
        }
    }

    /// Whether the library has this variant for `dtype`, `reduce` and
    /// `tail`: the Lamport kernel needs a 16-bit float with a sentinel
    /// (-0.0, which only a sum may rewrite as +0.0) and whole vectors.
    pub const fn takes(self, dtype: DtypeCode, reduce: ReduceCode, tail: bool) -> bool {
        match self {
            Variant::Lamport => {
                matches!(dtype, DtypeCode::Bf16 | DtypeCode::F16)
                    && matches!(reduce, ReduceCode::Sum)
                    && !tail
            }
            _ => true,
        }
    }
}

/// Whether the Lamport one-shot takes a `reduce` of `dtype` over `bytes`
/// bytes, where the caller allows it up to `limit` bytes: a sum of a
/// 16-bit float with the sentinel, within `LAMPORT_MAX` (the Lamport
/// region of a pool). Its grid must be `grid_blocks(vectors,
/// LAMPORT_THREADS, MAX_BLOCKS)`, which keeps vector `i` in block
/// `(i mod MAX_BLOCKS * LAMPORT_THREADS) / LAMPORT_THREADS` at every size:
/// one vector per thread up to a full grid, above it the full grid, whose
/// threads loop. The compiler's expansion and the runtime's library both
/// choose by it; each adds what its own kernels need (whole 16-byte
/// vectors, the buffer's region and the grid in the library, rows in the
/// compiler).
pub const fn lamport_takes(
    dtype: DtypeCode,
    reduce: ReduceCode,
    bytes: usize,
    limit: usize,
) -> bool {
    Variant::Lamport.takes(dtype, reduce, false) && bytes <= limit && bytes <= LAMPORT_MAX
}

/// An all-reduce of `input` (a symmetric buffer) into `out`. Parameters:
/// pool descriptor, input, out, count: with `tail`, any element count (the
/// elements after the last whole vector are reduced one by one); without,
/// a count of whole vectors (`Entry::vector` elements each), which is
/// faster by the tail's code (measured 1-2% at small sizes,
/// bench/results/2026-11-22-library-kernels-h200x2.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AllReduce {
    pub variant: Variant,
    pub dtype: DtypeCode,
    pub reduce: ReduceCode,
    pub world: u8,
    pub tail: bool,
}

/// One library kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    AllReduce(AllReduce),
    /// A one-shot all-reduce of bf16 rows fused with RMSNorm:
    /// `out = rmsnorm(sum over ranks of input) * gamma`, staged (inputs
    /// that fit a staging slot) or not. Parameters: pool descriptor,
    /// input, out, rows (u64), gamma, hidden size (u64, a multiple of 8),
    /// epsilon (f32). One block per row, `THREADS` threads.
    AllReduceRmsNorm {
        staged: bool,
        world: u8,
    },
    /// RMSNorm of bf16 rows alone: x, out, rows, gamma, hidden, epsilon.
    RmsNorm,
    /// One block meets every peer on channel 0. Parameter: pool descriptor.
    Barrier,
    /// The protocol's stress test: parameters pool descriptor, this rank's
    /// buffer, a u32 mismatch count, iterations.
    BarrierTest,
}

/// A generated kernel: its key, its PTX entry, the elements of one vector
/// access (all-reduces: their counts are split into whole vectors and a
/// tail), and its PTX.
#[derive(Clone, Copy, Debug)]
pub struct Entry {
    pub kernel: Kernel,
    pub name: &'static str,
    pub vector: usize,
    pub ptx: &'static str,
}

/// Every library kernel, in the generated table's order.
pub fn all() -> impl Iterator<Item = Kernel> {
    let all_reduces = Variant::ALL.into_iter().flat_map(|variant| {
        DtypeCode::ALL.iter().flat_map(move |&dtype| {
            ReduceCode::ALL.iter().flat_map(move |&reduce| {
                (1..=MAX_WORLD as u8).flat_map(move |world| {
                    [false, true]
                        .into_iter()
                        .filter(move |&tail| variant.takes(dtype, reduce, tail))
                        .map(move |tail| {
                            Kernel::AllReduce(AllReduce {
                                variant,
                                dtype,
                                reduce,
                                world,
                                tail,
                            })
                        })
                })
            })
        })
    });
    let norms = [false, true].into_iter().flat_map(|staged| {
        (1..=MAX_WORLD as u8).map(move |world| Kernel::AllReduceRmsNorm { staged, world })
    });
    all_reduces
        .chain(norms)
        .chain([Kernel::RmsNorm, Kernel::Barrier, Kernel::BarrierTest])
}

/// Blocks of an all-reduce grid in which each rank handles `vectors`
/// vector accesses (a two-shot: its chunk) on blocks of `threads`
/// threads: one per thread, at least one block, at most `most` (a pad's
/// channels, or one per SM).
pub const fn grid_blocks(vectors: usize, threads: usize, most: usize) -> usize {
    let blocks = vectors.div_ceil(threads);
    if blocks < 1 {
        1
    } else if blocks > most {
        most
    } else {
        blocks
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lamport_takes_small_sums_of_16_bit_floats() {
        let sum = ReduceCode::Sum;
        assert!(lamport_takes(DtypeCode::Bf16, sum, 16, LAMPORT_MAX));
        assert!(lamport_takes(DtypeCode::F16, sum, LAMPORT_MAX, LAMPORT_MAX));
        assert!(!lamport_takes(DtypeCode::F32, sum, 16, LAMPORT_MAX));
        assert!(!lamport_takes(
            DtypeCode::Bf16,
            ReduceCode::Max,
            16,
            LAMPORT_MAX
        ));
        // The caller's limit, and the pool's region whatever the limit.
        assert!(!lamport_takes(DtypeCode::Bf16, sum, 8192, 4096));
        assert!(!lamport_takes(
            DtypeCode::Bf16,
            sum,
            LAMPORT_MAX + 16,
            usize::MAX
        ));
    }

    /// The Lamport grid keeps vector `i` in block `(i mod full) / threads`
    /// at every size it takes, so a block's regions pair with the same
    /// block's calls whatever the sizes of the calls between.
    #[test]
    fn lamport_grid_keeps_each_vector_in_one_block_at_every_size() {
        let threads = LAMPORT_THREADS as usize;
        let full = MAX_BLOCKS * threads;
        for vectors in [
            1,
            threads + 1,
            full - 1,
            full,
            full + 1,
            2 * full + 5,
            LAMPORT_MAX / 8,
        ] {
            let stride = grid_blocks(vectors, threads, MAX_BLOCKS) * threads;
            for i in (0..vectors).step_by(97).chain([vectors - 1]) {
                assert_eq!(
                    (i % stride) / threads,
                    (i % full) / threads,
                    "{vectors} vectors, vector {i}"
                );
            }
        }
    }

    #[test]
    fn every_key_is_listed_once() {
        extern crate std;
        let keys: std::vec::Vec<Kernel> = all().collect();
        let unique: std::collections::HashSet<Kernel> = keys.iter().copied().collect();
        assert_eq!(keys.len(), unique.len());
        // 3 variants x 3 dtypes x 3 reductions x worlds x tail or not, the
        // Lamport one for bf16 and f16 sums without a tail, the norms, the
        // RMSNorm and the barriers.
        assert_eq!(
            keys.len(),
            3 * 3 * 3 * MAX_WORLD * 2 + 2 * MAX_WORLD + 2 * MAX_WORLD + 3
        );
    }

    #[test]
    fn grid_is_one_vector_per_thread_within_bounds() {
        let threads = THREADS as usize;
        assert_eq!(grid_blocks(0, threads, MAX_BLOCKS), 1);
        assert_eq!(grid_blocks(threads + 1, threads, MAX_BLOCKS), 2);
        assert_eq!(grid_blocks(1 << 30, threads, MAX_BLOCKS), MAX_BLOCKS);
        assert_eq!(
            grid_blocks(1 << 30, threads, Variant::TwoShot.most_blocks()),
            TWO_SHOT_MAX_BLOCKS
        );
        let lamport = Variant::Lamport.threads() as usize;
        assert_eq!(grid_blocks(lamport + 1, lamport, MAX_BLOCKS), 2);
    }
}
