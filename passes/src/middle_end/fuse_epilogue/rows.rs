//! The row half of `symm-mem-fuse-epilogue`: an all-reduce with an
//! element-wise epilogue (`symm_mem.all_reduce_epilogue_out`, the residual
//! add) followed by a row statistic of its output and an element-wise
//! consumer of that statistic (RMSNorm's sum of squares, then its scaling)
//! becomes one `symm_mem.all_reduce_rows_out`: the kernel that reduces a
//! row across ranks also folds the row's statistic and applies it, so the
//! residual stream is read once and RMSNorm's kernel disappears.
//!
//! The chain, ops in this order (allocations and constants between them
//! aside):
//! - the epilogue op, writing `out` (2-D, static rows of at most
//!   `ROW_BYTES_MAX`, which the fused kernel holds in registers);
//! - `linalg.fill` of a constant f32 into `stat`, a 1-D f32 allocation;
//! - a `linalg.generic` reducing `out`'s rows into `stat` (maps
//!   `(d0, d1) -> (d0, d1)` and `(d0, d1) -> (d0)`) whose body yields
//!   `arith.addf(x, acc)`, `acc` read only there;
//! - an element-wise `linalg.generic` reading `out` at the same position,
//!   `stat` once per row, other operands as the epilogue's may be, into a
//!   separate output.
//!
//! `stat` must be used by nothing else (but deallocs). Once the reduction
//! reads `out`, every refusal is a remark at the op it concerns.

use crate::ir::op_kind::OpKind;
use crate::{
    analysis::all_reduce::{ROW_BYTES_MAX, Scalar},
    analysis::linalg::body_captures_only_constants,
    analysis::row_reduction::match_row_reduction,
    ir::builders::{FloatOp, FusedAllReduce, Terminator},
    ir::convert::Rewriter,
    ir::melior_ext::{BlockExt, OperationExt, ValueExt, element_bytes},
    ir::typed_builder::{FusedAttributes, Inserter, shape_of},
    middle_end::fuse_epilogue::{Refusal, copy_in_constants, fusable},
};
use melior::{
    Context,
    ir::{
        BlockLike, BlockRef, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{FlatSymbolRefAttribute, FloatAttribute},
        operation::OperationLike,
        r#type::ShapedTypeLike,
    },
};

/// The ops after an epilogue op that join it.
pub(super) struct RowChain<'c, 'a> {
    fill: OperationRef<'c, 'a>,
    /// The statistic's initial value (the fill's f32 constant).
    init: FloatAttribute<'c>,
    reduction: OperationRef<'c, 'a>,
    consumer: OperationRef<'c, 'a>,
    stat_alloc: OperationRef<'c, 'a>,
    deallocs: Vec<OperationRef<'c, 'a>>,
    /// The consumer's inputs that read the epilogue's output.
    reads_out: Vec<usize>,
    /// The consumer's inputs that read the statistic.
    reads_stat: Vec<usize>,
}

/// The element type of a memref value.
fn element_of<'c>(value: Value<'c, '_>) -> Option<Type<'c>> {
    value.memref_type().map(|ty| ty.element())
}

/// The row chain after `fused` (an epilogue op), if the ops after it form
/// one; why not, at the op concerned, once the reduction reads its output.
pub(super) fn match_chain<'c, 'a>(
    fused: OperationRef<'c, 'a>,
) -> Result<Option<RowChain<'c, 'a>>, Refusal<'c, 'a>> {
    let Some(out) = fused
        .operand_count()
        .checked_sub(1)
        .and_then(|last| fused.operand(last).ok())
    else {
        return Ok(None);
    };
    let Some(fill) = fused
        .next_past_fresh()
        .filter(|op| op.isa(OpKind::LinalgFill))
    else {
        return Ok(None);
    };
    let Ok(stat) = fill.operand(1) else {
        return Ok(None);
    };
    let Some(reduction) = fill
        .next_past_fresh()
        .filter(|op| op.isa(OpKind::LinalgGeneric) && op.operand_count() == 2)
    else {
        return Ok(None);
    };
    if reduction.operand(0).ok() != Some(out) || reduction.operand(1).ok() != Some(stat) {
        return Ok(None);
    }
    let refuse = |op: OperationRef<'c, 'a>, why: &str| Err((op, why.to_owned()));
    let out_shape = out.memref_type().map_or(Vec::new(), shape_of);
    let row_bytes = match (
        out_shape.as_slice(),
        element_of(out).and_then(element_bytes),
    ) {
        ([_, columns], Some(bytes)) if *columns >= 0 => (*columns as u64).saturating_mul(bytes),
        _ => {
            return refuse(
                reduction,
                "the all-reduce's rows are not 2-D with a static length",
            );
        }
    };
    if row_bytes > ROW_BYTES_MAX {
        return refuse(
            reduction,
            &format!(
                "its rows of {row_bytes} bytes are longer than the fused kernel holds ({ROW_BYTES_MAX})"
            ),
        );
    }
    let Some(stat_alloc) = stat.defining_op().filter(|op| op.isa(OpKind::MemrefAlloc)) else {
        return refuse(fill, "the row statistic is not a fresh allocation");
    };
    let is_f32 = |ty: Option<Type>| ty.and_then(|ty| Scalar::of_type(ty)) == Some(Scalar::F32);
    let stat_rank = stat.memref_type().map_or(0, |ty| ty.rank());
    if stat_rank != 1 || !is_f32(element_of(stat)) {
        return refuse(fill, "the row statistic is not a 1-D f32 buffer");
    }
    let init = fill
        .operand(0)
        .ok()
        .and_then(|init| init.defining_op())
        .filter(|op| {
            op.isa(OpKind::Constant) && is_f32(op.result(0).ok().map(|result| result.r#type()))
        })
        .and_then(|op| op.attribute("value").ok())
        .and_then(|value| FloatAttribute::try_from(value).ok());
    let Some(init) = init else {
        return refuse(
            fill,
            "the row statistic starts from a value that is not an f32 constant",
        );
    };
    let row = match match_row_reduction(reduction) {
        Ok(Some(row)) => row,
        Ok(None) => return refuse(reduction, "it reduces no loop"),
        Err(why) => return refuse(reduction, &why.to_string()),
    };
    if row.loops != 2 || row.input_dims != [vec![0, 1]] {
        return refuse(
            reduction,
            "it does not read the rows in order into one value per row",
        );
    }
    if row.combiner.op != FloatOp::Add {
        return refuse(
            reduction,
            "its body does not yield arith.addf(x, acc) with acc read only there",
        );
    }
    if let Err(why) = body_captures_only_constants(reduction) {
        return refuse(reduction, why);
    }
    let Some(consumer) = reduction
        .next_past_fresh()
        .filter(|op| op.isa(OpKind::LinalgGeneric))
    else {
        return refuse(
            reduction,
            "no element-wise op reads the row statistic right after it",
        );
    };
    let reads = match fusable(consumer, out, Some(stat)) {
        Ok(reads) => reads,
        Err(why) => return refuse(consumer, why),
    };
    let consumer_out = consumer.operand(consumer.operand_count() - 1).ok();
    if consumer_out == Some(stat) {
        return refuse(consumer, "it writes the row statistic");
    }
    let mut deallocs = Vec::new();
    for (user, _) in stat.uses() {
        if user == fill || user == reduction || user == consumer {
            continue;
        }
        if !user.isa(OpKind::MemrefDealloc) {
            return refuse(
                user,
                "it reads the row statistic, which the fused kernel keeps in registers",
            );
        }
        deallocs.push(user);
    }
    Ok(Some(RowChain {
        fill,
        init,
        reduction,
        consumer,
        stat_alloc,
        deallocs,
        reads_out: reads.reduced,
        reads_stat: reads.per_row,
    }))
}

/// The first block of region `index` of `op`.
fn region_block<'c, 'a>(op: OperationRef<'c, 'a>, index: usize) -> Option<BlockRef<'c, 'a>> {
    op.region(index).ok()?.first_block()
}

/// Replaces `fused` and the chain with one `all_reduce_rows_out`: its
/// epilogue region is `fused`'s, its step the reduction's body and its
/// apply the consumer's, arguments (element, statistic, row operands...).
pub(super) fn fuse_rows<'c, 'a>(
    context: &'c Context,
    fused: OperationRef<'c, 'a>,
    chain: RowChain<'c, 'a>,
    rewriter: &mut Rewriter,
) -> Option<OperationRef<'c, 'a>> {
    let mut all: Vec<Value> = fused.operands().collect();
    let out = *all.last()?;
    let consumer_operands: Vec<Value> = chain.consumer.operands().collect();
    let (&rows_out, consumer_inputs) = consumer_operands.split_last()?;
    let stat = chain.fill.operand(1).ok()?;
    let row_operands: Vec<Value> = consumer_inputs
        .iter()
        .copied()
        .filter(|v| *v != out && *v != stat)
        .collect();
    all.extend_from_slice(&row_operands);
    all.push(rows_out);
    let mut segments = fused.operand_segments();
    segments.extend([row_operands.len(), 1]);
    let attributes = FusedAttributes {
        reduction: fused.attribute("reduction").ok()?,
        group: FlatSymbolRefAttribute::try_from(fused.attribute("group").ok()?).ok()?,
        algorithm: Some(fused.attribute("algorithm").ok()?),
        row_init: Some(chain.init),
        split_k_max_rows: fused.attribute("split_k_max_rows").ok(),
    };
    // Built where the consumer is (it writes the consumer's output), at
    // the epilogue op's location.
    let mut at_consumer = Inserter::before(context, chain.consumer)?;
    at_consumer.location = fused.location();
    let rows = at_consumer.fused_all_reduce(FusedAllReduce::Rows, &all, &segments, &attributes);
    rows.take_region_body(0, fused, 0);
    rows.take_region_body(1, chain.reduction, 0);
    rows.take_region_body(2, chain.consumer, 0);
    let step = region_block(rows, 1)?;
    rewriter.replace_terminator_of(at_consumer.context, step, Terminator::EpilogueYield);
    let apply = region_block(rows, 2)?;
    let loc = fused.location();
    let element = element_of(out)?;
    let total_ty = element_of(stat)?;
    let e = apply.insert_argument_at(0, element, loc);
    let total = apply.insert_argument_at(1, total_ty, loc);
    for &position in &chain.reads_out {
        Value::from(apply.argument(position + 2).ok()?).replace_uses_with(e);
    }
    for &position in &chain.reads_stat {
        Value::from(apply.argument(position + 2).ok()?).replace_uses_with(total);
    }
    let mut dead: Vec<usize> = chain
        .reads_out
        .iter()
        .chain(&chain.reads_stat)
        .map(|p| p + 2)
        .collect();
    dead.push(apply.argument_count() - 1);
    dead.sort_unstable();
    for index in dead.into_iter().rev() {
        apply.erase_argument_at(index);
    }
    rewriter.replace_terminator_of(at_consumer.context, apply, Terminator::EpilogueYield);
    copy_in_constants(rows);
    for op in [chain.consumer, chain.reduction, chain.fill] {
        rewriter.erase_op(op);
    }
    for dealloc in chain.deallocs {
        rewriter.erase_op(dealloc);
    }
    rewriter.erase_op(chain.stat_alloc);
    rewriter.erase_op(fused);
    Some(rows)
}
