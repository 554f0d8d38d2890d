//! The skinny matmul on Hopper's warpgroup tensor cores (`wgmma`, sm_90a),
//! for single matmuls without a prologue (the down projection, o_proj) at
//! up to `GemvTile::rows` rows: the weight streams through shared memory by
//! the TMA, as in `gemv_tma`, but one warpgroup multiplies each stage with
//! `wgmma` straight from shared memory (no `ldmatrix`, no register
//! fragments), with A and B swapped: the block's 64 weight columns are
//! `wgmma`'s M (the weight tile, M-major: its rows of K hold 64 columns
//! each) and the call's rows of `a` its N (K-major), so a kernel for calls
//! of up to `GemvTile::rows` rows (8 to 128, a multiple of 8) runs one
//! `m64n<rows>k16` per 16 rows of K.
//!
//! On one H200 (bench/gemv_probe/wgmma_gemm.cu, the same design) the
//! Llama-3-8B down projection of a TP-2 rank as two split-K slices reads
//! its 58.7 MB in 16.6-16.8 µs at 16 and 64 rows and 18.0-18.7 µs at 128,
//! against 19.4-21.0 µs for cuBLAS's one GEMM; but the layers run
//! cuBLAS's batched split-K GEMM (17.2-19.0 µs), and with this GEMV they
//! ran no faster on 2x H200, so it is opt-in (`wgmma-gemv`, off by
//! default; symm-compile --matmul-wgmma-gemv on sm_90a)
//! (bench/results/2026-11-27-wgmma-gemv-h200.md). Two rules give its
//! 16-row kernel for calls of 2 to 16 rows by default on sm_90a: to short
//! grids (`GemvTile::SHORT_WGMMA`) and to full ones launched behind a GEMV
//! (`GemvTile::AFTER_GEMV_WGMMA`), each with an 8-row kernel of the same
//! ring before it for calls of up to 8 rows (`GemvTile::eight_row_kernel`:
//! m64n8k16, half the multiplies; the down projection alone 0.2-0.6 µs
//! faster at 2-8 rows on one H200).
//!
//! A block owns 64 columns of the weight over its split-K slice (grid y).
//! Its fifth warp is the producer: for each stage of `stage_rows` weight
//! rows its first lane issues the weight's TMA box (128-byte swizzle, L2
//! evict-first) and one box of the call's rows of `a` per 64 elements of
//! K (the same swizzle; rows past the call's read as zeros), all on the
//! stage's `full` mbarrier; it refills a stage after the consumers
//! released it on its `empty` one. (Copied by the producer's lanes with
//! 16-byte `cp.async` instead, `a` held the 64- and 128-row kernels at
//! 24 and 50 µs on one H200: its bytes are once to twice the weight's.)
//! Behind the GEMV whose output it reads (`GemvTile::fills_before_wait`),
//! the producer issues the weight's boxes of the ring's first stages
//! before the kernel waits for that grid (`griddepcontrol.wait`, which the
//! kernel then places itself), and only `a`'s boxes after it: launched as
//! that grid's blocks finish their loops, the block's ring fills with
//! weight while the grid drains.
//! The first four warps are the warpgroup that consumes: per stage a
//! `wgmma` per 16 rows of K, committed as one group; the stage before is
//! released once only this one is still running. The steps take turns
//! over `GemvTile::accumulators` sets of accumulators (the 16-row kernels
//! two: a stage's `wgmma`s make two chains, not one, which at 2 rows
//! took the Llama-3-8B down projection from 16.9 to 16.5 µs alone on one
//! H200). The sets' sum goes to shared memory (where the ring was) and
//! every thread writes whole output elements through the epilogue
//! (`Gemv::write_out`).
//!
//! In thread-block clusters (`GemvTile::cluster`: the after-GEMV ring's
//! 2, which made the MLP block 0.35-0.8 µs faster on one H200, although
//! alone the down projection took the same time with them as without;
//! `wgmma-gemv-cluster` sets every ring's) the blocks side by side along
//! the column bands share `a`: piece p of a stage's `a` is block p mod N's, which
//! copies it by TMA multicast into every block of the cluster (each
//! completing the bytes on its own `full` barrier), so L2 serves `a` once a
//! cluster, as in cuBLAS's kernel for the down projection (session 43's
//! ncu: 8 MB of L2 reads less at 16 rows). Each stage's `empty` barrier
//! then counts every block's consumers, which release the stage in all of
//! them (`mapa`, then `mbarrier.arrive` on the cluster's window, at the
//! default `.cta` scope: `TensorCore::mbarrier_arrive_in` says why), so no
//! producer refills a stage another block still reads; the blocks meet
//! as a cluster after their barriers' set-up and before they leave.
//!
//! The descriptors come from the runtime (`symm_mem.tensor_map`): the
//! weight's (made once) and that of the call's rows of `a` (made once per
//! row count, outside a CUDA-graph capture), as extra kernel parameters.

use super::gemv::{Gemv, GemvShape, GemvTile, Operands};
use super::gemv_tma::{BARRIER, Ring, STAGE_ALIGNMENT, slices_problem};
use super::kernel::{SkinnyMatmul, WARP};
use super::tensor_core::TensorCore;
use crate::collectives::emit::{Emitter, Val};
use melior::dialect::arith::CmpiPredicate;

/// Weight columns per block: `wgmma`'s M, and one 128-byte box row.
pub const BLOCK_COLUMNS: u64 = 64;
/// Bytes of a swizzled row (a weight row's 64 columns, or 64 elements of
/// K of a row of `a`).
const ROW_BYTES: u64 = 128;
/// Elements of K in a swizzled row of `a`.
const A_ROW_ELEMENTS: u64 = 64;
/// The warps of the warpgroup that multiplies (the producer is one more).
const CONSUMER_WARPS: u64 = 4;
/// `wgmma`'s K for bf16.
const WGMMA_K: u64 = 16;
/// The bytes of the swizzle's pattern (eight rows): the stride between
/// groups of eight rows, the one stride both descriptors use (see
/// `descriptor`), and the boundary a stage starts on.
const ATOM_BYTES: u64 = STAGE_ALIGNMENT;
/// The most rows a call may have (`wgmma`'s N; the accumulators of a
/// thread are rows / 2 f32s).
const MAX_ROWS: u64 = 128;
/// The fewest rows (`wgmma`'s smallest N, one 8-row swizzle atom of `a`).
const MIN_ROWS: u64 = 8;

/// The most accumulator sets (`GemvTile::accumulators`): each holds
/// rows / 2 f32s a thread, and the shortest stage (64 rows) has 4 steps.
const MAX_ACCUMULATORS: u64 = 4;

/// Threads of a block: the consumer warpgroup and the producer warp.
pub(super) fn threads() -> u64 {
    (CONSUMER_WARPS + 1) * WARP
}

/// Why a `wgmma` tiling cannot run at any size (`None`: it can).
pub(super) fn tiling_problem(tile: &GemvTile) -> Option<String> {
    if tile.columns != BLOCK_COLUMNS {
        return Some(format!(
            "the wgmma GEMV takes {BLOCK_COLUMNS} columns of the weight per block, not {}",
            tile.columns
        ));
    }
    if !(MIN_ROWS..=MAX_ROWS).contains(&tile.rows) || !tile.rows.is_multiple_of(MIN_ROWS) {
        return Some(format!(
            "the wgmma GEMV takes {MIN_ROWS} to {MAX_ROWS} rows in steps of {MIN_ROWS}, not {}",
            tile.rows
        ));
    }
    if tile.stage_rows == 0
        || !tile.stage_rows.is_multiple_of(A_ROW_ELEMENTS)
        || tile.stage_rows > 256
    {
        return Some(format!(
            "a wgmma stage of {} weight rows: 64 to 256, whole rows of `a`'s 64-element pieces",
            tile.stage_rows
        ));
    }
    if tile.unroll < 2 {
        return Some("the wgmma ring needs at least 2 stages".into());
    }
    let pieces = tile.stage_rows / A_ROW_ELEMENTS;
    if !GemvTile::CLUSTERS.contains(&tile.cluster) || !pieces.is_multiple_of(tile.cluster) {
        return Some(format!(
            "clusters of {} blocks: 1, 2 or 4 that split a stage's {pieces} piece(s) of `a` evenly",
            tile.cluster
        ));
    }
    if !(1..=MAX_ACCUMULATORS).contains(&tile.accumulators) {
        return Some(format!(
            "{} wgmma accumulator sets: 1 to {MAX_ACCUMULATORS}",
            tile.accumulators
        ));
    }
    None
}

/// Why the `wgmma` GEMV cannot run this matmul (`None`: it can).
pub(super) fn matmul_problem(k: &SkinnyMatmul, tile: GemvTile) -> Option<String> {
    if !k.grid_dependency {
        return Some("wgmma needs sm_90a (launch-dependents marks sm_90 and up)".into());
    }
    if k.prologue.is_some() {
        return Some(
            "the wgmma GEMV stages no prologue (a pair's norm keeps the tensor-core GEMV)".into(),
        );
    }
    if let Some(problem) = k.rows_vector_problem() {
        return Some(problem);
    }
    if k.slices > 1 && k.a_slice != k.k {
        return Some("split-K slices of `a` that are not side by side in its rows".into());
    }
    let bands = k.gemv_grid(tile).0;
    if !bands.is_multiple_of(tile.cluster) {
        return Some(format!(
            "its {bands} column bands do not split into clusters of {}",
            tile.cluster
        ));
    }
    slices_problem(k, tile, "wgmma")
}

/// Where a `wgmma` GEMV's shared memory goes, in bytes from the dynamic
/// shared memory's start: the ring from 0 (on the first 1024-byte boundary
/// of the address at or after it, hence one atom of slack), each stage the
/// weight's box then the stage's columns of `a` (64-element pieces of
/// K, each `rows` swizzled rows); then the mbarriers (full, then empty),
/// and `end`. The sums take the place of the ring once the loop is done.
pub(super) struct RingLayout {
    pub stage: u64,
    /// Where `a` starts in a stage.
    pub a: u64,
    /// Bytes of one 64-element piece of K of the call's rows of `a`.
    pub a_piece: u64,
    pub barriers: u64,
    pub end: u64,
}

impl RingLayout {
    pub fn of(tile: &GemvTile, shape: &GemvShape) -> Self {
        let a = shape.weights * tile.stage_rows * ROW_BYTES;
        let a_piece = tile.rows * ROW_BYTES;
        let stage = a + (tile.stage_rows / A_ROW_ELEMENTS) * a_piece;
        let barriers = tile.unroll * stage + ATOM_BYTES;
        RingLayout {
            stage,
            a,
            a_piece,
            barriers,
            end: barriers + 2 * tile.unroll * BARRIER,
        }
    }
}

/// The constant fields of a shared-memory matrix descriptor: both byte
/// offsets 1024 (in 16-byte units) and the 128-byte swizzle (bits 62-63 =
/// 1). For the weight (M-major, one 64-column atom along M) the only
/// stride `wgmma` uses is the one between groups of eight rows of K; for
/// `a` (K-major, 16 of a row's 64 elements per `wgmma`) the one between
/// groups of eight rows; setting both offsets to it serves either.
pub(super) const DESCRIPTOR_FIELDS: i64 =
    (((ATOM_BYTES / 16) << 16) | ((ATOM_BYTES / 16) << 32) | (1 << 62)) as i64;

impl<'c> Gemv<'_, 'c> {
    /// The matrix descriptor (an i64) of the swizzled tile at shared `ptr`:
    /// `DESCRIPTOR_FIELDS` plus bits 4-17 of its address.
    fn descriptor(&self, e: &Emitter<'c>, ptr: Val<'c>) -> Val<'c> {
        let address = e.and(e.ptr_to_int(ptr, e.i64()), self.c(0x3_FFFF));
        e.add(e.div(address, self.c(16)), e.c64(DESCRIPTOR_FIELDS))
    }

    pub(super) fn emit_wgmma(&self) {
        let (e, k, tile) = (self.e, self.k, self.tile);
        let i64 = e.i64();
        let i32 = TensorCore::i32(e);
        let shape = k.gemv_shape();
        let layout = RingLayout::of(&tile, &shape);
        let stages = tile.unroll;
        let steps_per_stage = tile.stage_rows / WGMMA_K;
        let weight_bytes = tile.stage_rows * ROW_BYTES;
        let tid = e.cast(e.thread_id(), i64);
        // The warp's index as ptxas sees one (a 32-bit `tid.x >> 5`): the
        // branches on it are warp-uniform, so it does not serialize the
        // `wgmma`s in them (ptxas C7520, as with a 64-bit division).
        let tid32 = e.trunci(tid, i32);
        let warp32 = e.one(melior::dialect::arith::shrui(tid32, e.c32(5), e.loc));
        let warp = e.extui(warp32, i64);
        let lane = e.rem(tid, self.c(WARP));
        let Operands {
            m, out, weights, ..
        } = self.operands();
        // The weights' descriptors, then that of `a`.
        let first_descriptor = k.parameters(e).len();
        let descriptors: Vec<Val<'c>> = (0..k.weights as usize)
            .map(|j| e.int_to_ptr(e.arg(first_descriptor + j)))
            .collect();
        let a_descriptor = e.int_to_ptr(e.arg(first_descriptor + k.weights as usize));
        let iterations = k.k.div_ceil(tile.stage_rows);
        // The ring's first stages of weight before the wait for the grid
        // before (`GemvTile::fills_before_wait`): the weight is no output of
        // that grid; `a` is. Otherwise the first `prefetch` weight rows of
        // the block's columns towards L2 before that wait, as the TMA GEMV
        // does.
        let prefilled = if k.grid_dependency && tile.fills_before_wait {
            stages.min(iterations)
        } else {
            0
        };
        let column_start = e.mul(e.cast(e.block_id(), i64), self.c(BLOCK_COLUMNS));
        if prefilled == 0 {
            self.prefetch_rows(e, &weights, tid, column_start);
        }
        let shared = e.dynamic_shared();
        // In a cluster (`GemvTile::cluster`) each stage's `empty` barrier
        // counts every block's consumers: a block's multicast of `a`
        // writes the stage in all of them.
        let cluster = tile.cluster;
        let ring = Ring::new(
            e,
            (0, layout.stage, stages),
            layout.barriers,
            (1, (CONSUMER_WARPS * cluster) as i64),
        );
        // The cluster's barriers are initialized before any block copies
        // into or arrives on another's.
        let rank = (cluster > 1).then(|| {
            e.cluster_sync();
            e.extui(e.cluster_rank(), i64)
        });

        let slice = e.cast(e.block_id_y(), i64);
        let first_row = e.mul(slice, self.c(k.k));
        let a_pieces = tile.stage_rows / A_ROW_ELEMENTS;
        let stage_bytes = k.weights * weight_bytes + a_pieces * layout.a_piece;
        // The weight's boxes of stage `it` into ring slot `s`, after the
        // expected bytes of the whole stage (the producer's first lane).
        let fill_weights = |e: &Emitter<'c>, it: Val<'c>, s: Val<'c>| {
            let stage = ring.stage(e, s);
            let bar = ring.full(e, s);
            e.mbarrier_arrive_expect_tx(bar, e.c32(stage_bytes as i64));
            let k0 = e.mul(it, self.c(tile.stage_rows));
            let row = e.add(first_row, k0);
            let at = (e.trunci(column_start, i32), e.trunci(row, i32));
            let policy = tile.evict_first.then(|| e.l2_evict_first());
            for (j, descriptor) in descriptors.iter().enumerate() {
                let dst = e.byte_offset(stage, self.c(j as u64 * weight_bytes));
                match policy {
                    Some(policy) => {
                        e.tma_load_2d_with(dst, *descriptor, at, bar, (Some(policy), None))
                    }
                    None => e.tma_load_2d(dst, *descriptor, at, bar),
                }
            }
        };
        // `a`'s boxes of stage `it` into ring slot `s`.
        let fill_a = |e: &Emitter<'c>, it: Val<'c>, s: Val<'c>| {
            let stage = ring.stage(e, s);
            let bar = ring.full(e, s);
            let k0 = e.mul(it, self.c(tile.stage_rows));
            // `a`'s columns of the stage: its slice starts at column
            // slice x K of its rows.
            // In a cluster, piece p is block p mod cluster's, multicast to
            // every block (the same offset, each block's own barrier).
            for piece in 0..a_pieces {
                let dst = e.byte_offset(stage, self.c(layout.a + piece * layout.a_piece));
                let column = e.add(e.add(first_row, k0), self.c(piece * A_ROW_ELEMENTS));
                let at = (e.trunci(column, i32), e.c32(0));
                match rank {
                    None => e.tma_load_2d(dst, a_descriptor, at, bar),
                    Some(rank) => {
                        let mine = e.cmp(CmpiPredicate::Eq, rank, self.c(piece % cluster));
                        e.when(mine, |e| {
                            let every = e.constant(e.int_type(16), (1 << cluster) - 1);
                            e.tma_load_2d_with(dst, a_descriptor, at, bar, (None, Some(every)));
                        });
                    }
                }
            }
        };

        let producer = e.cmp(CmpiPredicate::Eq, warp32, e.c32(CONSUMER_WARPS as i64));
        let first_lane = e.cmp(CmpiPredicate::Eq, lane, self.c(0));
        if prefilled > 0 {
            e.when(e.and(producer, first_lane), |e| {
                for it in 0..prefilled {
                    fill_weights(e, self.c(it), self.c(it));
                }
            });
            e.grid_dependency(false);
        }
        let per_thread = tile.rows / 2;
        let f32 = e.f32();
        let accumulator =
            melior::dialect::llvm::r#type::r#struct(e.ctx, &vec![f32; per_thread as usize], false);
        let sums_ty = e.vector(k.weights * per_thread, f32);
        let sums = e.choose(
            producer,
            sums_ty,
            |e| {
                e.when(first_lane, |e| {
                    e.for_range(self.c(0), self.c(iterations), self.c(1), |e, it| {
                        let s = e.rem(it, self.c(stages));
                        let refill = e.cmp(CmpiPredicate::Uge, it, self.c(stages));
                        e.when(refill, |e| {
                            let round = e.sub(e.div(it, self.c(stages)), self.c(1));
                            let parity = e.trunci(e.rem(round, self.c(2)), i32);
                            e.mbarrier_wait(ring.empty(e, s), parity);
                        });
                        if prefilled > 0 {
                            let later = e.cmp(CmpiPredicate::Uge, it, self.c(prefilled));
                            e.when(later, |e| fill_weights(e, it, s));
                        } else {
                            fill_weights(e, it, s);
                        }
                        fill_a(e, it, s);
                    });
                });
                e.zero(sums_ty)
            },
            |e| {
                // `tile.accumulators` sets per weight: step s of a stage
                // adds into set s mod that, so that a stage's `wgmma`s
                // form that many chains; the sets are summed after the loop.
                let sets = tile.accumulators;
                let inits: Vec<Val<'c>> =
                    (0..k.weights * sets).map(|_| e.zero(accumulator)).collect();
                let accumulators = e.for_range_carrying_many(
                    (self.c(0), self.c(iterations), self.c(1)),
                    &inits,
                    |e, it, carried| {
                        let s = e.rem(it, self.c(stages));
                        let parity = e.trunci(e.rem(e.div(it, self.c(stages)), self.c(2)), i32);
                        e.mbarrier_wait(ring.full(e, s), parity);
                        let stage = ring.stage(e, s);
                        e.wgmma_fence();
                        let mut acc = carried.to_vec();
                        for step in 0..steps_per_stage {
                            let a_at = layout.a
                                + (step * WGMMA_K / A_ROW_ELEMENTS) * layout.a_piece
                                + (step * WGMMA_K % A_ROW_ELEMENTS) * 2;
                            let b = self.descriptor(e, e.byte_offset(stage, self.c(a_at)));
                            for w in 0..k.weights {
                                let w_at = w * weight_bytes + step * WGMMA_K * ROW_BYTES;
                                let a = self.descriptor(e, e.byte_offset(stage, self.c(w_at)));
                                let set = (w * sets + step % sets) as usize;
                                acc[set] = e.wgmma_bf16(acc[set], a, b, tile.rows);
                            }
                        }
                        e.wgmma_commit();
                        // The stage before is read once only this one runs.
                        e.wgmma_wait(1);
                        let release = e.and(
                            e.cmp(CmpiPredicate::Ugt, it, self.c(0)),
                            e.cmp(CmpiPredicate::Eq, lane, self.c(0)),
                        );
                        e.when(release, |e| {
                            let before = e.rem(e.add(it, self.c(stages - 1)), self.c(stages));
                            let empty = ring.empty(e, before);
                            if rank.is_some() {
                                // Released in every block of the cluster,
                                // whose producers multicast into this one.
                                for peer in 0..cluster {
                                    e.mbarrier_arrive_in(empty, e.c32(peer as i64));
                                }
                            } else {
                                e.mbarrier_arrive(empty);
                            }
                        });
                        acc
                    },
                );
                e.wgmma_wait(0);
                let mut sums = e.zero(sums_ty);
                for (w, sets_of_w) in accumulators.chunks(sets as usize).enumerate() {
                    for j in 0..per_thread {
                        let v = sets_of_w
                            .iter()
                            .map(|set| e.member(*set, j as i64, f32))
                            .reduce(|sum, v| e.addf(sum, v))
                            .unwrap_or_else(|| e.cf32(0.0));
                        sums = e.insert(sums, v, w as u64 * per_thread + j);
                    }
                }
                sums
            },
        );
        // The sums where the ring was: every warp is past its last read.
        e.sync_threads();
        self.let_next_grid_launch();
        let consumer = e.cmp(CmpiPredicate::Ult, warp32, e.c32(CONSUMER_WARPS as i64));
        e.when(consumer, |e| {
            // Accumulator j of thread (warp w, lane l): weight column
            // 16 w + l / 4 (+ 8 for j / 2 odd) of row 8 (j / 4) + 2 (l % 4)
            // + j % 2 of the call.
            let quad = e.rem(lane, self.c(4));
            let group = e.div(lane, self.c(4));
            for w in 0..k.weights {
                for j in 0..per_thread {
                    let row = e.add(self.c(8 * (j / 4) + j % 2), e.mul(quad, self.c(2)));
                    let column = e.add(
                        e.add(e.mul(warp, self.c(16)), group),
                        self.c(w * BLOCK_COLUMNS + 8 * ((j / 2) % 2)),
                    );
                    let v = e.extract(sums, w * per_thread + j);
                    e.store(v, self.sum_slot(e, shared, self.c(0), row, column), 4);
                }
            }
        });
        e.sync_threads();
        self.write_out(m, out, column_start, shared);
        if rank.is_some() {
            // No block leaves while another may still arrive on its
            // barriers.
            e.cluster_sync();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::gemv::Engine;

    /// The descriptor's start-address field of a shared address, as
    /// `Gemv::descriptor` computes it.
    fn descriptor_address(shared_address: u64) -> u64 {
        (shared_address & 0x3_FFFF) / 16
    }

    #[test]
    fn the_descriptor_fields_are_the_swizzle_and_two_1024_byte_strides() {
        let fields = DESCRIPTOR_FIELDS as u64;
        assert_eq!((fields >> 16) & 0x3FFF, 64, "leading byte offset / 16");
        assert_eq!((fields >> 32) & 0x3FFF, 64, "stride byte offset / 16");
        assert_eq!(fields >> 62, 1, "128-byte swizzle");
        assert_eq!(fields & 0x3FFF, 0, "no address");
        // Bits 4-17 of the address: a 1024-byte-aligned stage at 3 KB.
        assert_eq!(descriptor_address(3 * 1024), 192);
        assert_eq!(descriptor_address(0x4_0000 + 32), 2);
    }

    #[test]
    fn the_wgmma_tilings_fit_the_llama_down_projection() {
        let down = GemvShape::LLAMA_DOWN;
        for rows in [16, 64, 128] {
            let tile = GemvTile {
                rows,
                ..GemvTile::SINGLE_WGMMA
            };
            assert_eq!(tile.problem(&down), None, "{rows} rows");
            assert_eq!(tile.threads(1), 160);
            let layout = RingLayout::of(&tile, &down);
            assert_eq!(layout.a, tile.stage_rows * 128);
            assert!(layout.a.is_multiple_of(ATOM_BYTES));
            assert!(layout.stage.is_multiple_of(ATOM_BYTES));
            // The sums fit where the ring was.
            assert!(rows * 64 * 4 <= layout.barriers);
        }
    }

    #[test]
    fn wgmma_tilings_that_cannot_run_are_refused() {
        let base = GemvTile::SINGLE_WGMMA;
        assert_eq!(base.engine, Engine::Wgmma);
        let wide = GemvTile {
            columns: 128,
            ..base
        };
        assert!(tiling_problem(&wide).unwrap().contains("64 columns"));
        let odd = GemvTile { rows: 20, ..base };
        assert!(tiling_problem(&odd).unwrap().contains("steps of 8"));
        let many = GemvTile { rows: 256, ..base };
        assert!(tiling_problem(&many).unwrap().contains("8 to 128"));
        let few = GemvTile { rows: 4, ..base };
        assert!(tiling_problem(&few).unwrap().contains("8 to 128"));
        // wgmma's N in steps of 8: one 8-row swizzle atom of `a` or more.
        for rows in [8, 24] {
            assert_eq!(tiling_problem(&GemvTile { rows, ..base }), None);
        }
        let short = GemvTile {
            stage_rows: 48,
            ..base
        };
        assert!(tiling_problem(&short).unwrap().contains("64 to 256"));
        let one = GemvTile { unroll: 1, ..base };
        assert!(tiling_problem(&one).unwrap().contains("2 stages"));
        let none = GemvTile {
            accumulators: 0,
            ..base
        };
        assert!(tiling_problem(&none).unwrap().contains("1 to 4"));
        let too_many = GemvTile {
            accumulators: 5,
            ..base
        };
        assert!(tiling_problem(&too_many).unwrap().contains("1 to 4"));
        // As many sets as the shortest stage (64 rows) has steps.
        let four = GemvTile {
            accumulators: 4,
            stage_rows: 64,
            ..base
        };
        assert_eq!(tiling_problem(&four), None);
    }

    /// A cluster shares a stage's pieces of `a` evenly (1, 2 or 4 blocks);
    /// only the wgmma GEMV takes one, and a remark names it. The
    /// after-GEMV ring's own is 2 (its 8-row kernel's too), the short
    /// grid's none.
    #[test]
    fn clusters_split_the_pieces_of_a_evenly() {
        let short = GemvTile::SHORT_WGMMA;
        assert_eq!(short.cluster, 1);
        assert_eq!(short.cluster_note(), "");
        let after = GemvTile::AFTER_GEMV_WGMMA;
        assert_eq!((after.cluster, after.eight_row_kernel().cluster), (2, 2));
        assert_eq!(tiling_problem(&after.eight_row_kernel()), None);
        let ring = GemvTile {
            cluster: 1,
            ..after
        };
        for cluster in [2, 4] {
            let wide = GemvTile {
                cluster,
                stage_rows: 256,
                ..ring
            };
            assert_eq!(tiling_problem(&wide), None, "{cluster}");
        }
        let pair = GemvTile { cluster: 2, ..ring };
        assert_eq!(tiling_problem(&pair), None);
        assert_eq!(pair.cluster_note(), " in clusters of 2 sharing `a`");
        let uneven = GemvTile { cluster: 4, ..ring };
        assert!(tiling_problem(&uneven).unwrap().contains("2 piece(s)"));
        let odd = GemvTile { cluster: 3, ..ring };
        assert!(tiling_problem(&odd).unwrap().contains("1, 2 or 4"));
        let tma = GemvTile {
            cluster: 2,
            ..GemvTile::SINGLE_TMA
        };
        assert!(tma.tiling_problem(1).unwrap().contains("only the wgmma"));
    }

    /// A ring's 8-row kernel is the same ring (its stages, sets, early
    /// fill) for calls of up to 8 rows, and its stages hold 8 rows of `a`.
    #[test]
    fn the_eight_row_kernel_is_the_ring_for_fewer_rows() {
        let down = GemvShape::LLAMA_DOWN;
        for ring in [GemvTile::SHORT_WGMMA, GemvTile::AFTER_GEMV_WGMMA] {
            let eight = ring.eight_row_kernel();
            assert_eq!((eight.rows, eight.takes()), (8, 8));
            assert_eq!(
                GemvTile {
                    rows: ring.rows,
                    calls: ring.calls,
                    ..eight
                },
                ring
            );
            assert_eq!(eight.problem(&down), None);
            let (small, large) = (RingLayout::of(&eight, &down), RingLayout::of(&ring, &down));
            assert_eq!(small.a_piece, 8 * ROW_BYTES);
            assert_eq!(large.stage - small.stage, 2 * 8 * ROW_BYTES);
            assert!(small.stage.is_multiple_of(ATOM_BYTES));
            assert!(eight.shared_bytes(&down) < ring.shared_bytes(&down));
        }
    }

    #[test]
    fn only_the_wgmma_gemv_takes_accumulator_sets() {
        assert_eq!(GemvTile::SHORT_WGMMA.accumulators, 2);
        assert_eq!(GemvTile::AFTER_GEMV_WGMMA.accumulators, 2);
        assert_eq!(GemvTile::SINGLE_WGMMA.accumulators, 1);
        let tma = GemvTile {
            accumulators: 2,
            ..GemvTile::SINGLE_TMA
        };
        assert!(tma.tiling_problem(1).unwrap().contains("only the wgmma"));
    }

    /// A ring's stages and weight rows, and a shape: `(stages,
    /// stage_rows, shape)`, for the properties below.
    fn rings() -> impl proptest::strategy::Strategy<Value = (u64, u64, GemvShape)> {
        use proptest::strategy::Strategy;
        (2u64..11, 1u64..5, 1u64..600, 1u64..3).prop_map(|(stages, pieces, k_steps, weights)| {
            let shape = GemvShape {
                k: k_steps * 16,
                weights,
                staged: false,
                streamed: false,
                column_bytes: 0,
            };
            (stages, pieces * 64, shape)
        })
    }

    proptest::proptest! {
        /// A 16-row ring's 8-row kernel runs wherever the ring does (the
        /// pass puts it before the ring without asking again), in less
        /// shared memory.
        #[test]
        fn the_eight_row_kernel_runs_where_its_ring_does(
            (stages, stage_rows, shape) in rings(),
            after_gemv in proptest::bool::ANY,
        ) {
            let base = if after_gemv { GemvTile::AFTER_GEMV_WGMMA } else { GemvTile::SHORT_WGMMA };
            let ring = GemvTile { unroll: stages, stage_rows, ..base };
            if ring.problem(&shape).is_none() {
                let eight = ring.eight_row_kernel();
                proptest::prop_assert_eq!(eight.problem(&shape), None);
                proptest::prop_assert!(eight.shared_bytes(&shape) < ring.shared_bytes(&shape));
            }
        }

        /// An accepted tiling's regions fit its shared memory: the sums
        /// where the ring was, the barriers after the ring's slack.
        #[test]
        fn accepted_wgmma_layouts_fit(
            row_steps in 1u64..17,
            (stages, stage_rows, shape) in rings(),
        ) {
            let tile = GemvTile {
                rows: row_steps * 8,
                unroll: stages,
                stage_rows,
                ..GemvTile::SINGLE_WGMMA
            };
            if tile.problem(&shape).is_none() {
                let layout = RingLayout::of(&tile, &shape);
                proptest::prop_assert!(tile.rows * 64 * 4 <= layout.barriers);
                proptest::prop_assert!(layout.end <= tile.shared_bytes(&shape));
                proptest::prop_assert!(tile.shared_bytes(&shape) <= super::super::kernel::MAX_SHARED);
            }
        }
    }
}
