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
//! before. Only the one-shot kernels sum slices: a call whose message is
//! above `one-shot-max-bytes` (by default 512 KiB on more than 2 ranks,
//! 64 rows of 4096 bf16) takes the two-shot, after the whole matmul
//! (symm-mem-expand-collectives cuts the sizes so).
//!
//! `min-k` = 3072 from a sweep over K on one H200 (the probe with its
//! weights rotated through 200 MB of copies, so each call reads HBM, as a
//! model's layers do; bench/results/2026-11-23-split-k-rows-h200.md): 2
//! f32 slices against cuBLAS at 1/16/128 rows of N = 4096 were 0.99-1.05x
//! at K = 1792 and 2048 (TP 8's down projection, TP 2's o_proj: nothing to
//! gain), 1.11-1.21x at 3584 and 4096, 1.12-1.15x at 7168 and 1.03-1.09x
//! at 14336. The generated GEMVs since run a block per 64 columns and
//! slice, so an unsplit o_proj of N = 4096 fills 64 of an H200's 132 SMs;
//! splitting it anyway did not pay in the layer: the TP-2 decoder on 2x
//! H200 with `min-k` = 2048 took 1.1-1.8 µs longer at 1 and 16 rows (the
//! split o_proj GEMV itself was faster: 7.8-7.9 µs against 9.7 unsplit at
//! 16 rows in the measured choice), and at TP 2/4/8's widths on one H200
//! `min-k` = 512 tied or lost 0.1-0.8 µs
//! (bench/results/2026-11-28-oproj-split-h200x2.md).

use crate::analysis::linalg::{default_maps, zero_constant};
use crate::ir::convert::{Rewrite, Rewriter, convert_all_typed};
use crate::ir::melior_ext::{OperationExt, ValueExt, element_bytes, has_identity_layout};
use crate::ir::op_kind::OpKind;
use crate::ir::typed_builder::{Inserter, static_dim};
use crate::{OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, TypedPass};
use melior::{
    Context,
    dialect::ods,
    ir::{
        OperationRef, Type, Value,
        operation::OperationLike,
        r#type::{MemRefType, ShapedTypeLike},
    },
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

/// Whether `op` is a fused all-reduce (`symm_mem.all_reduce_epilogue_out`
/// or `symm_mem.all_reduce_rows_out`).
fn is_fused(op: OperationRef) -> bool {
    op.isa(OpKind::AllReduceEpilogueOut) || op.isa(OpKind::AllReduceRowsOut)
}

/// The matmul (and the zero fill before it) that produce `all_reduce`'s
/// input, if they may become its prologue.
fn producer<'c, 'a>(
    all_reduce: OperationRef<'c, 'a>,
    policy: Policy,
) -> Option<(OperationRef<'c, 'a>, OperationRef<'c, 'a>)> {
    let Policy {
        slices,
        max_rows,
        min_k,
    } = policy;
    if all_reduce.operand_segments().get(1..4)? != [0, 0, 0] {
        return None;
    }
    let input = all_reduce.operand(0).ok()?;
    if !input.defining_op()?.isa(OpKind::MemrefAlloc) {
        return None;
    }
    // The input's readers and writers: the fill, the matmul, the
    // all-reduce, its dealloc.
    let (mut fill, mut matmul) = (None, None);
    let operand_is_input = |user: OperationRef, at: usize| user.operand(at).ok() == Some(input);
    for (user, _) in input.uses() {
        match user.kind() {
            OpKind::LinalgFill if user.operand_count() == 2 && operand_is_input(user, 1) => {
                fill = Some(user)
            }
            OpKind::LinalgMatmul if user.operand_count() == 3 && operand_is_input(user, 2) => {
                matmul = Some(user)
            }
            OpKind::MemrefDealloc | OpKind::MemrefDim => {}
            _ if user == all_reduce => {}
            _ => return None,
        }
    }
    let (fill, matmul) = (fill?, matmul?);
    // Nothing that touches a buffer runs between them.
    let quiet = |op: &OperationRef| {
        op.isa(OpKind::Constant) || op.isa(OpKind::MemrefAlloc) || op.isa(OpKind::MemrefDim)
    };
    let next_busy = |op: OperationRef<'c, 'a>| {
        std::iter::successors(op.next_in_block(), |o| o.next_in_block()).find(|o| !quiet(o))
    };
    if next_busy(fill) != Some(matmul)
        || next_busy(matmul) != Some(all_reduce)
        || !zero_constant(fill.operand(0).ok()?)
        || !default_maps(matmul)
    {
        return None;
    }
    let (lhs, rhs) = (matmul.operand(0).ok()?, matmul.operand(1).ok()?);
    if lhs == input || rhs == input {
        return None;
    }
    let input_ty = input.memref_type()?;
    let element = input_ty.element();
    let element_bytes = element_bytes(element)?;
    let plain = |v: Value| {
        v.memref_type().is_some_and(|ty| {
            ty.rank() == 2 && has_identity_layout(ty.into()) && ty.element() == element
        })
    };
    let rhs_ty = rhs.memref_type()?;
    if !plain(lhs) || !plain(rhs) || !plain(input) || !rhs_ty.has_static_shape() {
        return None;
    }
    let k = static_dim(rhs_ty, 0)?;
    let slice_bytes = ((k / slices.max(1)) as u64).checked_mul(element_bytes)?;
    if slices < 2 || k < min_k || k % slices != 0 || !slice_bytes.is_multiple_of(16) {
        return None;
    }
    if static_dim(input_ty, 0).is_some_and(|rows| rows > max_rows) {
        return None;
    }
    Some((fill, matmul))
}

/// Folds `matmul` into `all_reduce` as its prologue, split into `slices`
/// of K for up to `max_rows` rows, into a new `partials` buffer: the op is
/// updated in place (its prologue's operand groups filled), and the
/// matmul and its fill go through the conversion's rewriter.
fn fold<'c, 'a>(
    context: &'c Context,
    all_reduce: OperationRef<'c, 'a>,
    (fill, matmul): (OperationRef<'c, 'a>, OperationRef<'c, 'a>),
    (slices, max_rows): (i64, i64),
    rewriter: &mut Rewriter,
) -> Option<()> {
    let mut b = Inserter::before(context, all_reduce)?;
    let input = all_reduce.operand(0).ok()?;
    let input_ty = input.memref_type()?;
    let columns = static_dim(input_ty, 1).unwrap_or(0);
    // Room for min(rows, max_rows) rows of each slice: one flat buffer
    // (allocations are dynamic in their leading size only), seen as
    // slices x rows x columns.
    let f32 = Type::float32(context);
    let ty = |shape: &[i64]| MemRefType::new(f32, shape, None, None);
    const DYNAMIC: i64 = i64::MIN;
    let (flat, partials) = match static_dim(input_ty, 0) {
        Some(rows) => {
            let room = rows.min(max_rows);
            let flat = b.alloc(ty(&[slices * room * columns]), &[]);
            let partials = b.expand_flat(flat, ty(&[slices, room, columns]), &[]);
            (flat, partials)
        }
        None => {
            let rows = b.dim(input, 0);
            let bound = b.index(max_rows);
            let room = b.value(ods::arith::minui(context, rows, bound, b.location).into());
            let per_row = b.index(slices * columns);
            let elements = b.value(ods::arith::muli(context, room, per_row, b.location).into());
            let flat = b.alloc(ty(&[DYNAMIC]), &[elements]);
            let partials = b.expand_flat(flat, ty(&[slices, DYNAMIC, columns]), &[room]);
            (flat, partials)
        }
    };
    // The prologue's groups (segments 1 to 3) filled: the matmul's
    // operands and the partials.
    let (lhs, rhs) = (matmul.operand(0).ok()?, matmul.operand(1).ok()?);
    let mut operands = vec![input, lhs, rhs, partials];
    operands.extend(all_reduce.operands().skip(1));
    let mut segments = all_reduce.operand_segments();
    segments.get_mut(1..4)?.fill(1);
    symm_dialects::emit_remark(
        matmul.location(),
        &format!(
            "split over K into {slices} slices summed by the all-reduce, for calls of up to \
             {max_rows} rows whose all-reduce is a one-shot (a call above one-shot-max-bytes, \
             512 KiB on more than 2 ranks by default, runs the matmul whole before a two-shot)"
        ),
    );
    rewriter.erase_op(matmul);
    rewriter.erase_op(fill);
    all_reduce.set_operands_in_groups(&operands, &segments);
    all_reduce.set_int_attribute("split_k_max_rows", 64, max_rows);
    Inserter::after(context, all_reduce)?.dealloc(flat);
    rewriter.updated_op_in_place(all_reduce);
    Some(())
}

impl TypedPass for SplitK {
    fn run_typed<'c>(
        context: &'c Context,
        function: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let policy = Policy {
            slices: options.int("slices").unwrap_or(2),
            max_rows: options.int("max-rows").unwrap_or(128),
            min_k: options.int("min-k").unwrap_or(3072),
        };
        if policy.max_rows <= 0 {
            return Ok(());
        }
        // Through MLIR's conversion driver: a fused all-reduce whose input
        // a foldable matmul produces is illegal, and its rewrite folds the
        // matmul in (which makes it legal: its input has no producer left).
        let foldable = |op: OperationRef| is_fused(op) && producer(op, policy).is_some();
        convert_all_typed(
            function,
            "symm-mem-split-k left a fused all-reduce it was to fold",
            &foldable,
            &mut |all_reduce, rewriter| {
                let folded = producer(all_reduce, policy).and_then(|ops| {
                    fold(
                        context,
                        all_reduce,
                        ops,
                        (policy.slices, policy.max_rows),
                        rewriter,
                    )
                });
                match folded {
                    Some(()) => Rewrite::Lowered,
                    None => Rewrite::Refused,
                }
            },
        )
    }
}
