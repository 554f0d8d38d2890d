//! `cudagraph-hoist-allocs` (seed 001 [4/5]): a device allocation that a
//! fallback region writes as an output (the analog of Inductor's
//! ExternKernelOut, e.g. the destination of a host-to-device copy) moves
//! into the partition launched before that region and becomes one of its
//! outputs. The graph then allocates it once, at capture, and every replay
//! hands back the same address: no allocation per call.
//!
//! The allocations are listed first, in program order, and hoisted one by
//! one through melior's `IrRewriter`: a hoist moves its allocation (never
//! erases it) and replaces the launch before it, so every listed op is
//! still alive when its turn comes, and the launch is looked up again then
//! (the hoist of an earlier allocation may have replaced it).

use crate::{
    PassDescriptor, PassFailed, PassOptions, TypedPass,
    ir::melior_ext::{BlockExt, OperationExt, ValueExt, attribute_text},
    ir::op_kind::OpKind,
};
use melior::{
    Context, IrRewriter,
    dialect::func,
    ir::{
        BlockLike, BlockRef, OperationRef, RegionLike, Type, Value, ValueLike,
        attribute::{DenseI64ArrayAttribute, FlatSymbolRefAttribute, TypeAttribute},
        operation::OperationLike,
        r#type::FunctionType,
    },
};
use symm_dialects::emit_remark;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<HoistAllocs>(
    c"cudagraph-hoist-allocs",
    c"CudaGraphHoistAllocs",
    c"Move device allocations written by a fallback region into the prior CUDA-graph partition, \
      as extra outputs",
    c"builtin.module",
    &[],
    file!(),
);

pub struct HoistAllocs;

impl TypedPass for HoistAllocs {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let Some(body) = module.first_block() else {
            return Ok(());
        };
        let rewriter = IrRewriter::new(context);
        for function in body.ops() {
            if !function.isa(OpKind::Func)
                || function.has_attribute("cudagraph.partition")
                || function
                    .region(0)
                    .ok()
                    .map_or(0, |region| blocks_of(region))
                    != 1
            {
                continue;
            }
            let Some(entry) = function.first_block() else {
                continue;
            };
            for alloc in entry.ops() {
                if let Some((launch, partition)) = hoist_target(alloc, body) {
                    hoist(context, &rewriter, alloc, (launch, partition));
                }
            }
        }
        Ok(())
    }
}

/// How many blocks `region` has.
fn blocks_of(region: melior::ir::RegionRef) -> usize {
    std::iter::successors(region.first_block(), |block| block.next_in_region()).count()
}

/// Where `op` would move: the nearest launch before it in its block (the
/// function's body) and that launch's partition (a function of the module
/// `body` with a body: a user may launch a declaration), when `op` is an
/// allocation a fallback op writes.
fn hoist_target<'c, 'a>(
    op: OperationRef<'c, 'a>,
    module_body: BlockRef<'c, 'a>,
) -> Option<(OperationRef<'c, 'a>, OperationRef<'c, 'a>)> {
    if !written_by_fallback(op)
        || !op
            .parent_operation()
            .is_some_and(|parent| parent.isa(OpKind::Func))
    {
        return None;
    }
    let launch = op
        .block()?
        .ops()
        .into_iter()
        .take_while(|before| *before != op)
        .filter(|before| before.isa(OpKind::GraphLaunch))
        .last()?;
    let callee = launch.symbol_or_string("callee")?;
    let partition = module_body.ops().into_iter().find(|candidate| {
        candidate.isa(OpKind::Func)
            && candidate.symbol_or_string("sym_name").as_deref() == Some(callee.as_str())
    })?;
    partition.first_block().map(|_| (launch, partition))
}

/// A statically sized device allocation that a fallback op writes: the
/// target of a copy, or a buffer handed to a call.
fn written_by_fallback(op: OperationRef) -> bool {
    if !op.isa(OpKind::MemrefAlloc) || op.operand_count() != 0 {
        return false;
    }
    let Ok(result) = op.result(0) else {
        return false;
    };
    let result = Value::from(result);
    let host_or_space = melior::ir::r#type::MemRefType::try_from(result.r#type())
        .map_or(true, |memref| memref.memory_space().is_some());
    if host_or_space {
        return false;
    }
    result
        .uses()
        .into_iter()
        .any(|(user, index)| (user.isa(OpKind::MemrefCopy) && index == 1) || user.isa(OpKind::Call))
}

/// Moves `alloc` into `partition` as a new last output; a new launch
/// replaces `launch`. Every change goes through `rewriter`.
fn hoist<'c, 'a>(
    context: &'c Context,
    rewriter: &IrRewriter<'c>,
    alloc: OperationRef<'c, 'a>,
    (launch, partition): (OperationRef<'c, 'a>, OperationRef<'c, 'a>),
) {
    let rewriter = rewriter.as_rewriter_base();
    let Some(ret) = partition.first_block().and_then(|body| body.terminator()) else {
        return;
    };
    let Ok(buffer) = alloc.result(0).map(Value::from) else {
        return;
    };
    rewriter.move_op_before(alloc, ret);
    let mut outputs: Vec<Value> = ret.operands().collect();
    outputs.push(buffer);
    rewriter.set_insertion_point_before(ret);
    rewriter.insert(func::r#return(&outputs, ret.location()));
    rewriter.erase_op(ret);

    let (inputs, mut results) = partition
        .attribute("function_type")
        .ok()
        .and_then(|attr| TypeAttribute::try_from(attr).ok())
        .and_then(|attr| FunctionType::try_from(attr.value()).ok())
        .map(|ty| {
            let inputs: Vec<Type> = (0..ty.input_count())
                .filter_map(|i| ty.input(i).ok())
                .collect();
            let results: Vec<Type> = (0..ty.result_count())
                .filter_map(|i| ty.result(i).ok())
                .collect();
            (inputs, results)
        })
        .unwrap_or_default();
    results.push(buffer.r#type());
    let function_type = FunctionType::new(context, &inputs, &results);
    partition.set_attribute_to(
        "function_type",
        TypeAttribute::new(function_type.into()).into(),
    );
    let mut hoisted: Vec<i64> = partition
        .attribute("cudagraph.hoisted")
        .ok()
        .and_then(|attr| DenseI64ArrayAttribute::try_from(attr).ok())
        .map(|array| {
            (0..array.len())
                .filter_map(|i| array.element(i).ok())
                .collect()
        })
        .unwrap_or_default();
    let output = results.len() - 1;
    hoisted.push(output as i64);
    partition.set_attribute_to(
        "cudagraph.hoisted",
        DenseI64ArrayAttribute::new(context, &hoisted).into(),
    );

    let Ok(callee) = launch
        .attribute("callee")
        .and_then(FlatSymbolRefAttribute::try_from)
    else {
        return;
    };
    let operands: Vec<Value> = launch.operands().collect();
    rewriter.set_insertion_point_before(launch);
    let new_launch = rewriter.insert(
        symm_dialects::cudagraph::launch(context, &results, &operands, callee, launch.location())
            .into(),
    );
    for (old, new) in launch.results().zip(new_launch.results()) {
        rewriter.replace_all_uses_with(old.into(), new.into());
    }
    rewriter.erase_op(launch);
    let Ok(hoisted_result) = new_launch.result(output).map(Value::from) else {
        return;
    };
    for (user, index) in buffer.uses() {
        let inside =
            std::iter::successors(Some(user), |op| op.parent_operation()).any(|op| op == partition);
        if !inside {
            user.set_operand_to(index, hoisted_result);
        }
    }
    emit_remark(
        alloc.location(),
        &format!(
            "cudagraph-hoist-allocs: allocation moved into partition {} as output #{output}: \
             allocated once at capture, same address on every replay",
            attribute_text(callee.into())
                .map(|name| format!("@{name}"))
                .unwrap_or_default()
        ),
    );
}
