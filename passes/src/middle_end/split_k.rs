//! `symm-mem-split-k`: a `linalg.matmul` whose output only an
//! all-reduce reads (a tensor-parallel down or output projection's partial
//! sums) becomes the all-reduce's matmul prologue, split over K for calls
//! of up to `max-rows` rows (the `matmul(...) split_k(...)` of
//! `symm_mem.all_reduce_epilogue_out` and `symm_mem.all_reduce_rows_out`).
//!
//! At decode sizes cuBLAS runs such a GEMM as a split-K kernel plus a
//! kernel that sums the slices. The prologue instead writes the slices
//! (f32) into `partials`, and the all-reduce kernel sums them where it
//! reads its own rank's data: one kernel and one launch gap less, with the
//! same rounding (the slices' f32 sum rounded once).
//!
//! Taken when: the matmul writes a fresh allocation (zero-filled right
//! before it) that nothing but the all-reduce reads; the all-reduce (after
//! `symm-mem-fuse-epilogue`) is a fused one (an element-wise epilogue, or
//! one with a row statistic such as the next RMSNorm) without a prologue,
//! directly after the matmul; the operands are 2-D with identity layouts
//! and one element type; K is at least `min-k` and `slices` divides it
//! into slices of whole 16-byte vectors; and a static row count is at most
//! `max-rows`. Larger calls of a dynamic row count run the whole matmul as
//! before.
//!
//! `min-k` = 3072 from a sweep over K on one H200 (the probe with its
//! weights rotated through 200 MB of copies, so each call reads HBM, as a
//! model's layers do; bench/results/2026-11-23-split-k-rows-h200.md): 2
//! f32 slices against cuBLAS at 1/16/128 rows of N = 4096 were 0.99-1.05x
//! at K = 1792 and 2048 (TP 8's down projection, TP 2's o_proj: nothing to
//! gain), 1.11-1.21x at 3584 and 4096, 1.12-1.15x at 7168 and 1.03-1.09x
//! at 14336.

use crate::ir::op_kind::OpKind;
use crate::{
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, SymmPass,
    ir::builders::Builder,
    ir::builders::{FusedAllReduce, FusedAttrs, fused_all_reduce},
    ir::convert::{Rewrite, Rewriter, convert_all},
    ir::{Op, Val, emit_remark},
};

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<SplitK>(
    c"symm-mem-split-k",
    c"SymmMemSplitK",
    c"Fold a matmul that only an all-reduce reads into it, split over K at decode sizes",
    c"func.func",
    &[
        PassOption::new(
            c"max-rows",
            c"Largest row count whose matmul runs as split-K slices summed by the all-reduce (0: never)",
            OptionKind::Int64,
            c"128",
        ),
        PassOption::new(
            c"slices",
            c"Slices of K",
            OptionKind::Int64,
            c"2",
        ),
        PassOption::new(
            c"min-k",
            c"Smallest K (the matmul's inner size) that is split",
            OptionKind::Int64,
            c"3072",
        ),
    ],
    file!(),
);

pub struct SplitK;

/// The pass's options.
#[derive(Clone, Copy)]
struct Policy {
    slices: i64,
    max_rows: i64,
    min_k: i64,
}

/// The matmul (and the zero fill before it) that produce `all_reduce`'s
/// input, if they may become its prologue.
fn producer(all_reduce: Op, policy: Policy) -> Option<(Op, Op)> {
    let Policy {
        slices,
        max_rows,
        min_k,
    } = policy;
    let segments = all_reduce.operand_segments();
    if segments.get(1..4)? != [0, 0, 0] {
        return None;
    }
    let input = all_reduce.operand(0);
    let alloc = input.def()?;
    if !alloc.isa(OpKind::MemrefAlloc) {
        return None;
    }
    // The input's readers and writers: the fill, the matmul, the
    // all-reduce, its dealloc.
    let (mut fill, mut matmul) = (None, None);
    for (user, _) in input.uses() {
        match user.kind() {
            OpKind::LinalgFill if user.num_operands() == 2 && user.operand(1) == input => {
                fill = Some(user)
            }
            OpKind::LinalgMatmul if user.num_operands() == 3 && user.operand(2) == input => {
                matmul = Some(user)
            }
            OpKind::MemrefDealloc | OpKind::MemrefDim => {}
            _ if user == all_reduce => {}
            _ => return None,
        }
    }
    let (fill, matmul) = (fill?, matmul?);
    // Nothing that touches a buffer runs between them.
    let quiet = |op: &Op| {
        op.isa(OpKind::Constant) || op.isa(OpKind::MemrefAlloc) || op.isa(OpKind::MemrefDim)
    };
    let next_busy = |op: Op| std::iter::successors(op.next(), |o| o.next()).find(|o| !quiet(o));
    if next_busy(fill) != Some(matmul)
        || next_busy(matmul) != Some(all_reduce)
        || !crate::analysis::linalg::is_zero_constant(fill.operand(0))
        || !crate::analysis::linalg::has_default_maps(matmul)
    {
        return None;
    }
    let (lhs, rhs) = (matmul.operand(0), matmul.operand(1));
    if lhs == input || rhs == input {
        return None;
    }
    let element = input.ty().element();
    let element_bytes = element.scalar()?.bytes()?;
    let plain = |v: Val| {
        let ty = v.ty();
        ty.shape().len() == 2 && ty.has_identity_layout() && ty.element() == element
    };
    if !plain(lhs) || !plain(rhs) || !plain(input) || !rhs.ty().has_static_shape() {
        return None;
    }
    let k = rhs.ty().shape()[0]?;
    let slice_bytes = ((k / slices.max(1)) as u64).checked_mul(element_bytes)?;
    if slices < 2 || k < min_k || k % slices != 0 || !slice_bytes.is_multiple_of(16) {
        return None;
    }
    if input.ty().shape()[0].is_some_and(|rows| rows > max_rows) {
        return None;
    }
    Some((fill, matmul))
}

/// Rebuilds `all_reduce` with `matmul` as its prologue, split into
/// `slices` of K for up to `max_rows` rows, into a new `partials` buffer;
/// the old ops go through the conversion's rewriter.
fn fold(
    all_reduce: Op,
    (fill, matmul): (Op, Op),
    (slices, max_rows): (i64, i64),
    rewriter: &mut Rewriter,
) {
    let ctx = all_reduce.ctx();
    let mut b = Builder::before(all_reduce);
    let input = all_reduce.operand(0);
    let shape = input.ty().shape();
    let columns = shape[1].unwrap_or(0);
    // Room for min(rows, max_rows) rows of each slice: one flat buffer
    // (allocations are dynamic in their leading size only), seen as
    // slices x rows x columns.
    let f32 = ctx.f32_type();
    let ty = |shape: &[Option<i64>]| ctx.memref(shape, f32, None, None);
    let (flat, partials) = match shape[0] {
        Some(rows) => {
            let room = rows.min(max_rows);
            let flat = b.alloc(ty(&[Some(slices * room * columns)]), &[], None);
            let partials_ty = ty(&[Some(slices), Some(room), Some(columns)]);
            (flat, b.expand_flat(flat, partials_ty, &[]))
        }
        None => {
            let rows = b.dim(input, 0);
            let bound = b.index(max_rows);
            let room = b.minui(rows, bound);
            let per_row = b.index(slices * columns);
            let elements = b.muli(room, per_row);
            let flat = b.alloc(ty(&[None]), &[elements], None);
            let partials_ty = ty(&[Some(slices), None, Some(columns)]);
            (flat, b.expand_flat(flat, partials_ty, &[room]))
        }
    };
    // The same op with the prologue's groups (segments 1 to 3) filled.
    let operands = all_reduce.operands();
    let (lhs, rhs) = (matmul.operand(0), matmul.operand(1));
    let mut all = vec![input, lhs, rhs, partials];
    all.extend_from_slice(&operands[1..]);
    let mut segments = all_reduce.operand_segments();
    segments[1..4].fill(1);
    let kind = FusedAllReduce::of(all_reduce).expect("a candidate is a fused all-reduce");
    let attrs = FusedAttrs {
        reduction: all_reduce
            .attr("reduction")
            .expect("verified: it has a reduction"),
        group: all_reduce.attr("group").expect("verified: it has a group"),
        algorithm: all_reduce.attr("algorithm"),
        row_init: all_reduce.attr("row_init"),
        split_k_max_rows: Some(ctx.i64(max_rows)),
    };
    let regions = all_reduce.num_regions();
    let folded = fused_all_reduce(kind, all_reduce.loc(), &all, &segments, &attrs);
    b.insert(folded);
    for region in 0..regions {
        folded.take_region_at(region, all_reduce, region);
    }
    emit_remark(
        matmul.loc(),
        &format!(
            "split over K into {slices} slices summed by the all-reduce, for calls of up to \
             {max_rows} rows"
        ),
    );
    let mut after = Builder::new(
        ctx,
        all_reduce.loc(),
        crate::ir::builders::At::After(folded),
    );
    after.dealloc(flat);
    rewriter.erase(all_reduce);
    rewriter.erase(matmul);
    rewriter.erase(fill);
}

impl SymmPass for SplitK {
    fn run(function: Op, options: &PassOptions) -> Result<(), PassFailed> {
        let policy = Policy {
            slices: options.int("slices").unwrap_or(2),
            max_rows: options.int("max-rows").unwrap_or(128),
            min_k: options.int("min-k").unwrap_or(3072),
        };
        if policy.max_rows <= 0 {
            return Ok(());
        }
        // Through MLIR's conversion driver: a fused all-reduce whose input
        // a foldable matmul produces is illegal, and its rewrite is the
        // folded op (which is legal: its input has no producer left).
        let foldable = |op: Op| FusedAllReduce::of(op).is_some() && producer(op, policy).is_some();
        convert_all(
            function,
            "symm-mem-split-k left a fused all-reduce it was to fold",
            &foldable,
            &mut |all_reduce, rewriter| match producer(all_reduce, policy) {
                Some(ops) => {
                    fold(all_reduce, ops, (policy.slices, policy.max_rows), rewriter);
                    Rewrite::Lowered
                }
                None => Rewrite::Refused,
            },
        )
    }
}
