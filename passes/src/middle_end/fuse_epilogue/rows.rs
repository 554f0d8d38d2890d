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
    analysis::linalg::captures_only_constants,
    analysis::row_reduction::match_row_reduction,
    ir::builders::{FloatOp, FusedAllReduce, FusedAttrs, Terminator, fused_all_reduce},
    ir::convert::Rewriter,
    ir::{Attr, Op, Val},
    middle_end::fuse_epilogue::{copy_in_constants, fusable},
};

/// The ops after an epilogue op that join it.
pub(super) struct RowChain {
    fill: Op,
    init: Attr,
    reduction: Op,
    consumer: Op,
    stat_alloc: Op,
    deallocs: Vec<Op>,
    /// The consumer's inputs that read `out`, and those that read `stat`.
    reads_out: Vec<usize>,
    reads_stat: Vec<usize>,
}

/// Why the chain after `fused` cannot join it (`Err`, with the op to
/// blame), or `Ok(None)` when no row statistic of its output follows.
pub(super) fn match_chain(fused: Op) -> Result<Option<RowChain>, crate::Refusal> {
    let operands = fused.operands();
    let out = operands[operands.len() - 1];
    let Some(fill) = fused
        .next_past_fresh()
        .filter(|op| op.isa(OpKind::LinalgFill))
    else {
        return Ok(None);
    };
    let stat = fill.operand(1);
    let Some(reduction) = fill
        .next_past_fresh()
        .filter(|op| op.isa(OpKind::LinalgGeneric) && op.num_operands() == 2)
    else {
        return Ok(None);
    };
    if reduction.operand(0) != out || reduction.operand(1) != stat {
        return Ok(None);
    }
    // From here on the user wrote the chain: say why it stays apart.
    let refuse = |op: Op, why: &str| Err((op, why.into()));
    let shape = out.ty().shape();
    let row_bytes = match (
        shape.as_slice(),
        out.ty().element().scalar().and_then(Scalar::bytes),
    ) {
        ([_, Some(columns)], Some(bytes)) => (*columns as u64).saturating_mul(bytes),
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
    let Some(stat_alloc) = stat.def().filter(|op| op.isa(OpKind::MemrefAlloc)) else {
        return refuse(fill, "the row statistic is not a fresh allocation");
    };
    if stat.ty().shape().len() != 1 || stat.ty().element().scalar() != Some(Scalar::F32) {
        return refuse(fill, "the row statistic is not a 1-D f32 buffer");
    }
    let init = fill
        .operand(0)
        .def()
        .filter(|op| op.isa(OpKind::Constant) && op.result(0).ty().scalar() == Some(Scalar::F32))
        .and_then(|op| op.attr("value"));
    let Some(init) = init else {
        return refuse(
            fill,
            "the row statistic starts from a value that is not an f32 constant",
        );
    };
    // The reduction as symm-linalg-rows-to-gpu would take it, then what
    // the fused kernel needs besides: one row of `out` per statistic, a sum.
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
    if let Err(why) = captures_only_constants(reduction) {
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
    let consumer_out = consumer.operand(consumer.num_operands() - 1);
    if consumer_out == stat {
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

/// Fuses `chain` (`match_chain`'s) into `fused`: returns the new op; the
/// old ones go through the conversion's rewriter.
pub(super) fn fuse_rows(fused: Op, chain: RowChain, rewriter: &mut Rewriter) -> Op {
    // The fused op's operands as they are (input, its matmul prologue if
    // any, epilogue operands, out), then the row operands and rows_out.
    let mut all = fused.operands();
    let out = *all.last().expect("the epilogue op has an output");
    let consumer_operands = chain.consumer.operands();
    let (&rows_out, consumer_inputs) = consumer_operands.split_last().expect("checked by fusable");
    let stat = chain.fill.operand(1);
    let row_operands: Vec<Val> = consumer_inputs
        .iter()
        .copied()
        .filter(|v| *v != out && *v != stat)
        .collect();
    all.extend_from_slice(&row_operands);
    all.push(rows_out);
    let mut segments = fused.operand_segments();
    segments.extend([row_operands.len(), 1]);
    let keep = |name: &str| fused.attr(name).expect("the epilogue op has it");
    let attrs = FusedAttrs {
        reduction: keep("reduction"),
        group: keep("group"),
        algorithm: Some(keep("algorithm")),
        row_init: Some(chain.init),
        split_k_max_rows: fused.attr("split_k_max_rows"),
    };
    let rows = fused_all_reduce(FusedAllReduce::Rows, fused.loc(), &all, &segments, &attrs);
    rows.take_region_at(0, fused, 0);
    rows.take_region_at(1, chain.reduction, 0);
    rows.take_region_at(2, chain.consumer, 0);
    // The step's block is already (element, accumulator).
    let step = rows.region_blocks(1)[0];
    rewriter.replace_terminator(step, Terminator::EpilogueYield);
    // The apply's: (out's element, the row total, row operands...), from
    // the consumer's (inputs..., output).
    let apply = rows.region_blocks(2)[0];
    let loc = fused.loc();
    let element = out.ty().element();
    let total_ty = stat.ty().element();
    let e = apply.insert_arg(0, element, loc);
    let total = apply.insert_arg(1, total_ty, loc);
    for &position in &chain.reads_out {
        apply.arg(position + 2).replace_all_uses_with(e);
    }
    for &position in &chain.reads_stat {
        apply.arg(position + 2).replace_all_uses_with(total);
    }
    let mut dead: Vec<usize> = chain
        .reads_out
        .iter()
        .chain(&chain.reads_stat)
        .map(|p| p + 2)
        .collect();
    dead.push(apply.num_args() - 1);
    dead.sort_unstable();
    for index in dead.into_iter().rev() {
        apply.erase_arg(index);
    }
    rewriter.replace_terminator(apply, Terminator::EpilogueYield);
    copy_in_constants(rows);
    chain.consumer.insert_before(rows);
    for op in [chain.consumer, chain.reduction, chain.fill] {
        rewriter.erase(op);
    }
    for dealloc in chain.deallocs {
        rewriter.erase(dealloc);
    }
    rewriter.erase(chain.stat_alloc);
    rewriter.erase(fused);
    rows
}
