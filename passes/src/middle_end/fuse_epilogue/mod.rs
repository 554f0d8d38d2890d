//! `symm-mem-fuse-epilogue`: an all-reduce whose result buffer is read
//! only by the element-wise `linalg.generic` right after it (bias add,
//! residual add, activation) becomes one `symm_mem.all_reduce_epilogue_out`
//! that applies the generic's body while writing the generic's output. The
//! intermediate buffer and one kernel launch disappear.
//!
//! Fused when: the generic is the next op (allocations and constants
//! aside); all its loops are parallel; it
//! reads the all-reduce's output with the identity map and every other
//! input with the identity map or as a row broadcast (`(d0, d1) -> (d1)`);
//! it does not read its own output; and the all-reduce's output is a
//! `memref.alloc` used by nothing else (but a dealloc).
//!
//! With `fuse-rows` (the default), a row statistic of the epilogue's output
//! and its element-wise consumer join it too (`rows`: RMSNorm after
//! the residual add).

pub mod rows;

use crate::ir::op_kind::OpKind;
use crate::{
    OptionKind, PassDescriptor, PassFailed, PassOption, PassOptions, TypedPass,
    analysis::all_reduce::Algorithm,
    analysis::linalg::{body_captures_only_constants, loop_kinds},
    ir::builders::{FusedAllReduce, Terminator},
    ir::convert::{Rewrite, Rewriter, convert_all_typed},
    ir::melior_ext::{BlockExt, OperationExt, ValueExt, dim_projection},
    ir::typed_builder::{FusedAttributes, Inserter, shape_of},
};
use melior::{
    Context,
    ir::{
        Attribute, BlockLike, OperationRef, Value,
        attribute::{ArrayAttribute, FlatSymbolRefAttribute, IntegerAttribute},
        operation::OperationLike,
        r#type::{IntegerType, ShapedTypeLike},
    },
};
use symm_dialects::emit_remark;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<FuseEpilogue>(
    c"symm-mem-fuse-epilogue",
    c"SymmMemFuseEpilogue",
    c"Fuse element-wise linalg.generic consumers of an all-reduce into its kernel",
    c"func.func",
    &[PassOption::new(
        c"fuse-rows",
        c"Also fuse a row statistic of the epilogue's output and its element-wise consumer (RMSNorm after a residual add) into the all-reduce",
        OptionKind::Bool,
        c"true",
    )],
    file!(),
);

pub struct FuseEpilogue;

/// How the generic reads one operand.
#[derive(Debug, PartialEq, Eq)]
enum Access {
    Identity,
    RowBroadcast,
    /// One value per row (`(d0, d1) -> (d0)`): a row statistic.
    PerRow,
    Other,
}

/// How the generic reads one operand, from its indexing map (the loops,
/// and which loop each result is).
fn access(map: Option<(usize, Vec<usize>)>) -> Access {
    let Some((loops, results)) = map else {
        return Access::Other;
    };
    if results.iter().copied().eq(0..loops) {
        Access::Identity
    } else if loops > 1 && results == [loops - 1] {
        Access::RowBroadcast
    } else if loops == 2 && results == [0] {
        Access::PerRow
    } else {
        Access::Other
    }
}

/// Classifies the maps of an `indexing_maps` attribute.
fn accesses(maps: Option<Attribute>) -> Vec<Access> {
    let Some(maps) = maps.and_then(|maps| ArrayAttribute::try_from(maps).ok()) else {
        return Vec::new();
    };
    (0..maps.len())
        .map(|i| access(maps.element(i).ok().and_then(dim_projection)))
        .collect()
}

/// The shape of a memref value (empty for other types).
fn shape(value: Value) -> Vec<i64> {
    value.memref_type().map_or(Vec::new(), shape_of)
}

/// The positions of an element-wise generic's inputs that read the
/// all-reduce's result, and those that read a row statistic.
#[derive(Debug, Default)]
pub(crate) struct Reads {
    pub reduced: Vec<usize>,
    pub per_row: Vec<usize>,
}

/// Why `generic` cannot be fused after an all-reduce writing `reduced`
/// (and, with `per_row`, a row statistic of it), or where it reads them.
pub(crate) fn fusable(
    generic: OperationRef,
    reduced: Value,
    per_row: Option<Value>,
) -> Result<Reads, &'static str> {
    match loop_kinds(generic) {
        Some(reduced) if !reduced.is_empty() && !reduced.contains(&true) => {}
        _ => return Err("it has reduction loops"),
    }
    let operands: Vec<Value> = generic.operands().collect();
    let Some((&output, inputs)) = operands.split_last() else {
        return Err("it has no operands");
    };
    if generic.result_count() != 0 || output == reduced {
        return Err("it must write a separate memref output");
    }
    if shape(output) != shape(reduced) {
        return Err("its output has another shape");
    }
    let maps = accesses(generic.attribute("indexing_maps").ok());
    if maps.len() != operands.len() || maps.last() != Some(&Access::Identity) {
        return Err("its output map is not the identity");
    }
    let mut reads = Reads::default();
    for (position, (input, access)) in inputs.iter().zip(&maps).enumerate() {
        let statistic = per_row == Some(*input);
        match access {
            Access::Identity if !statistic => {}
            Access::RowBroadcast if *input != reduced && !statistic && shape(*input).len() == 1 => {
            }
            Access::PerRow if statistic => {}
            _ if statistic => return Err("it reads the row statistic other than once per row"),
            _ => return Err("it reads an operand with a map other than identity or row broadcast"),
        }
        if *input == reduced {
            reads.reduced.push(position);
        } else if statistic {
            reads.per_row.push(position);
        }
    }
    if reads.reduced.is_empty() {
        return Err("it does not read the all-reduce result");
    }
    if per_row.is_some() && reads.per_row.is_empty() {
        return Err("it does not read the row statistic");
    }
    let body = generic.first_block().ok_or("it has no body")?;
    let last = body
        .argument_count()
        .checked_sub(1)
        .ok_or("it has no body")?;
    let output_arg: Value = body.argument(last).map_err(|_| "it has no body")?.into();
    if !output_arg.uses().is_empty() {
        return Err("it reads its own output");
    }
    body_captures_only_constants(generic)?;
    Ok(reads)
}

/// Copies the constants that the regions of `fused` read from outside
/// into the block that reads them (checked by `captures_only_constants`).
pub(crate) fn copy_in_constants(fused: OperationRef) {
    for op in fused.descendants() {
        for index in 0..op.operand_count() {
            let Ok(operand) = op.operand(index) else {
                continue;
            };
            if let Some(def) = operand.defining_op()
                && !fused.is_ancestor_of(def)
                && let Some(block) = op.block()
            {
                let copy = block.insert_operation(0, def.cloned());
                if let Ok(value) = copy.result(0) {
                    op.set_operand_to(index, value.into());
                }
            }
        }
    }
}

/// `all_reduce_epilogue_out`'s `operandSegmentSizes` without a matmul
/// prologue: input, no lhs, rhs or partials, the epilogue operands, out.
fn epilogue_out_segments(epilogue_operands: usize) -> [usize; 6] {
    [1, 0, 0, 0, epilogue_operands, 1]
}

fn fuse<'c, 'a>(
    context: &'c Context,
    all_reduce: OperationRef<'c, 'a>,
    fusion: &Fusion<'c, 'a>,
    rewriter: &mut Rewriter,
) -> Option<OperationRef<'c, 'a>> {
    let generic = fusion.generic;
    let reduced = all_reduce.operand(1).ok()?;
    let operands: Vec<Value> = generic.operands().collect();
    let (&output, inputs) = operands.split_last()?;
    let mut fused_operands = vec![all_reduce.operand(0).ok()?];
    fused_operands.extend(inputs.iter().copied().filter(|v| *v != reduced));
    fused_operands.push(output);
    let i32 = IntegerType::new(context, 32).into();
    let reduction = all_reduce
        .attribute("reduction")
        .unwrap_or_else(|_| IntegerAttribute::new(i32, 0).into());
    let group = FlatSymbolRefAttribute::try_from(all_reduce.attribute("group").ok()?).ok()?;
    let segments = epilogue_out_segments(fused_operands.len() - 2);
    let code = Algorithm::fixed_by_op(all_reduce).map_or(0, Algorithm::code);
    let attributes = FusedAttributes {
        reduction,
        group,
        algorithm: Some(IntegerAttribute::new(i32, i64::from(code)).into()),
        row_init: None,
        split_k_max_rows: None,
    };
    // Built where the generic is (it writes the generic's output), at the
    // all-reduce's location.
    let mut at_generic = Inserter::before(context, generic)?;
    at_generic.location = all_reduce.location();
    let fused = at_generic.fused_all_reduce(
        FusedAllReduce::Epilogue,
        &fused_operands,
        &segments,
        &attributes,
    );
    fused.take_region_body(0, generic, 0);
    let body = fused.first_block()?;
    // Block arguments: (reduced element, other inputs..., no output).
    let element = reduced.memref_type()?.element();
    let reduced_arg = body.insert_argument_at(0, element, all_reduce.location());
    for &position in &fusion.reads {
        let read: Value = body.argument(position + 1).ok()?.into();
        read.replace_uses_with(reduced_arg);
    }
    let mut dead: Vec<usize> = fusion.reads.iter().map(|p| p + 1).collect();
    dead.push(body.argument_count() - 1);
    dead.sort_unstable();
    for index in dead.into_iter().rev() {
        body.erase_argument_at(index);
    }
    // Constants from outside are copied in (fusable checked there are no
    // other captures).
    copy_in_constants(fused);
    rewriter.replace_terminator_of(context, body, Terminator::EpilogueYield);
    Some(fused)
}

/// An all-reduce's element-wise consumer that becomes its epilogue, and
/// the intermediate buffer between them that goes.
struct Fusion<'c, 'a> {
    generic: OperationRef<'c, 'a>,
    alloc: OperationRef<'c, 'a>,
    deallocs: Vec<OperationRef<'c, 'a>>,
    /// The generic's inputs that read the reduced buffer.
    reads: Vec<usize>,
}

/// Why an op stays apart: the op to put the remark on, and the reason.
pub(super) type Refusal<'c, 'a> = (OperationRef<'c, 'a>, String);

/// The fusion of `all_reduce` with the generic right after it (fresh
/// allocations and constants in between touch no buffer the two use), if
/// there is one; why not, at the generic, when that generic cannot be its
/// epilogue. Reads the IR only.
fn fusion_of<'c, 'a>(
    all_reduce: OperationRef<'c, 'a>,
) -> Result<Option<Fusion<'c, 'a>>, Refusal<'c, 'a>> {
    let Ok(reduced) = all_reduce.operand(1) else {
        return Ok(None);
    };
    let generic = all_reduce
        .next_past_fresh()
        .filter(|op| op.isa(OpKind::LinalgGeneric));
    let Some(generic) = generic else {
        return Ok(None);
    };
    let Some(alloc) = reduced
        .defining_op()
        .filter(|op| op.isa(OpKind::MemrefAlloc))
    else {
        return Ok(None);
    };
    let deallocs: Vec<OperationRef> = reduced
        .uses()
        .into_iter()
        .map(|(user, _)| user)
        .filter(|user| *user != all_reduce && *user != generic)
        .collect();
    if deallocs.iter().any(|user| !user.isa(OpKind::MemrefDealloc)) {
        return Ok(None);
    }
    let reads = fusable(generic, reduced, None).map_err(|why| (generic, why.to_owned()))?;
    Ok(Some(Fusion {
        generic,
        alloc,
        deallocs,
        reads: reads.reduced,
    }))
}

impl TypedPass for FuseEpilogue {
    fn run_typed<'c>(
        context: &'c Context,
        function: OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed> {
        // Why a consumer stays apart, once per all-reduce.
        for all_reduce in function.descendants() {
            if all_reduce.isa(OpKind::AllReduceOut)
                && let Err((generic, why)) = fusion_of(all_reduce)
            {
                emit_remark(
                    generic.location(),
                    &format!("not fused into the all-reduce epilogue: {why}"),
                );
            }
        }
        // Through MLIR's conversion driver: an all-reduce with a fusion is
        // illegal; its rewrite is the fused op, and the all-reduce, the
        // generic and the intermediate buffer go through the rewriter.
        let has_fusion =
            |op: OperationRef| op.isa(OpKind::AllReduceOut) && matches!(fusion_of(op), Ok(Some(_)));
        let left = "symm-mem-fuse-epilogue left an all-reduce it was to fuse";
        convert_all_typed(function, left, &has_fusion, &mut |all_reduce, rewriter| {
            let Ok(Some(fusion)) = fusion_of(all_reduce) else {
                return Rewrite::Refused;
            };
            let Some(fused) = fuse(context, all_reduce, &fusion, rewriter) else {
                return Rewrite::Refused;
            };
            rewriter.erase_op(fusion.generic);
            rewriter.erase_op(all_reduce);
            for dealloc in fusion.deallocs {
                rewriter.erase_op(dealloc);
            }
            rewriter.erase_op(fusion.alloc);
            emit_remark(
                fused.location(),
                "fused the element-wise consumer into the all-reduce: one kernel, no intermediate buffer",
            );
            Rewrite::Lowered
        })?;
        if options.flag("fuse-rows") {
            // The same for the row chains after the fused ops.
            for epilogue in function.descendants() {
                if epilogue.isa(OpKind::AllReduceEpilogueOut)
                    && let Err((at, why)) = rows::match_chain(epilogue)
                {
                    emit_remark(
                        at.location(),
                        &format!("not fused into the all-reduce's rows: {why}"),
                    );
                }
            }
            let has_chain = |op: OperationRef| {
                op.isa(OpKind::AllReduceEpilogueOut) && matches!(rows::match_chain(op), Ok(Some(_)))
            };
            let left = "symm-mem-fuse-epilogue left a row chain it was to fuse";
            convert_all_typed(function, left, &has_chain, &mut |epilogue, rewriter| {
                let Ok(Some(chain)) = rows::match_chain(epilogue) else {
                    return Rewrite::Refused;
                };
                let Some(rows) = rows::fuse_rows(context, epilogue, chain, rewriter) else {
                    return Rewrite::Refused;
                };
                emit_remark(
                    rows.location(),
                    "fused the row statistic and its consumer into the all-reduce: one kernel reduces, applies the epilogue and normalizes each row",
                );
                Rewrite::Lowered
            })?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{Access, access};

    #[test]
    fn classifies_identity_row_broadcast_and_per_row_maps() {
        // (d0, d1) -> (d0, d1), (d1), (d0), (d1, d0); a map that is no
        // projection of the loops (a constant result) is another access.
        assert_eq!(access(Some((2, vec![0, 1]))), Access::Identity);
        assert_eq!(access(Some((2, vec![1]))), Access::RowBroadcast);
        assert_eq!(access(Some((2, vec![0]))), Access::PerRow);
        assert_eq!(access(Some((2, vec![1, 0]))), Access::Other);
        assert_eq!(access(None), Access::Other);
        // Three loops: the last one alone broadcasts rows; identity is all.
        assert_eq!(access(Some((3, vec![2]))), Access::RowBroadcast);
        assert_eq!(access(Some((3, vec![0, 1, 2]))), Access::Identity);
        assert_eq!(access(Some((3, vec![0]))), Access::Other);
    }
}
