//! `cudagraph-hoist-allocs` (seed 001 [4/5]): a device allocation that a
//! fallback region writes as an output (the analog of Inductor's
//! ExternKernelOut, e.g. the destination of a host-to-device copy) moves
//! into the partition launched before that region and becomes one of its
//! outputs. The graph then allocates it once, at capture, and every replay
//! hands back the same address: no allocation per call.

use crate::ir::op_kind::OpKind;
use crate::{
    PassDescriptor, PassFailed, PassOptions, SymmPass,
    ir::convert::{Rewrite, Rewriter, convert_all},
    ir::module::{SymbolIndex, defined_functions},
    ir::{Op, Ty, emit_remark},
};

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

impl SymmPass for HoistAllocs {
    fn run(module: Op, _options: &PassOptions) -> Result<(), PassFailed> {
        let symbols = SymbolIndex::new(module);
        for function in defined_functions(module) {
            if function.attr("cudagraph.partition").is_some()
                || function.region_blocks(0).len() != 1
            {
                continue;
            }
            // Through the conversion driver: an allocation to hoist is
            // illegal, and its rewrite erases the launch before it (and the
            // partition's old return) through the driver's rewriter, so no
            // erased op is visited again. The allocations go in program
            // order: each one's launch is the nearest before it, which the
            // hoist of an earlier one may have replaced.
            convert_all(
                function,
                "cudagraph-hoist-allocs left an allocation it could hoist",
                &|op| hoist_target(op, &symbols).is_some(),
                &mut |alloc, rewriter| match hoist_target(alloc, &symbols) {
                    Some((launch, partition)) => {
                        hoist(alloc, launch, partition, rewriter);
                        Rewrite::Lowered
                    }
                    None => Rewrite::Refused,
                },
            )?;
        }
        Ok(())
    }
}

/// Where `op` would move: the nearest launch before it in its block (the
/// function's body) and that launch's partition, when `op` is an
/// allocation a fallback op writes.
fn hoist_target(op: Op, symbols: &SymbolIndex) -> Option<(Op, Op)> {
    if !written_by_fallback(op) || !op.parent().is_some_and(|parent| parent.isa(OpKind::Func)) {
        return None;
    }
    let first = op.block()?.first_op();
    let launch = std::iter::successors(first, |before| before.next())
        .take_while(|before| *before != op)
        .filter(|before| before.isa(OpKind::GraphLaunch))
        .last()?;
    Some((launch, partition_of(launch, symbols)?))
}

/// The partition a launch runs, if it has a body to hoist into (a user may
/// launch a declaration).
fn partition_of(launch: Op, symbols: &SymbolIndex) -> Option<Op> {
    symbols
        .lookup(&launch.attr("callee")?.symbol_or_string()?)
        .filter(|partition| partition.entry_block().is_some())
}

/// A statically sized device allocation that a fallback op writes: the
/// target of a copy, or a buffer handed to a call.
fn written_by_fallback(op: Op) -> bool {
    if !op.isa(OpKind::MemrefAlloc) || op.num_operands() != 0 {
        return false;
    }
    let result = op.result(0);
    if result.ty().memory_space().is_some() {
        return false;
    }
    result
        .uses()
        .into_iter()
        .any(|(user, index)| (user.isa(OpKind::MemrefCopy) && index == 1) || user.isa(OpKind::Call))
}

/// Moves `alloc` into `partition` as a new last output; a new launch
/// replaces `launch`. The ops it replaces go through `rewriter`.
fn hoist(alloc: Op, launch: Op, partition: Op, rewriter: &mut Rewriter) {
    let ctx = partition.ctx();
    let body = partition.entry_block().expect("partitions have a body");
    let ret = body.terminator().expect("partitions end in func.return");
    alloc.remove_from_parent();
    ret.insert_before(alloc);
    let buffer = alloc.result(0);
    let mut outputs = ret.operands();
    outputs.push(buffer);
    ret.insert_before(crate::ir::builders::func_return(ret.loc(), &outputs));
    rewriter.erase(ret);

    let (inputs, mut results) = partition
        .attr("function_type")
        .and_then(|attr| Ty::from_type_attr(attr).function_io())
        .unwrap_or_default();
    results.push(buffer.ty());
    partition.set_attr(
        "function_type",
        ctx.type_attr(ctx.function_type(&inputs, &results)),
    );
    let mut hoisted = partition
        .attr("cudagraph.hoisted")
        .and_then(|attr| attr.i64_array())
        .unwrap_or_default();
    let output = results.len() - 1;
    hoisted.push(output as i64);
    partition.set_attr("cudagraph.hoisted", ctx.i64_array(&hoisted));

    let callee = launch
        .attr("callee")
        .expect("launches name their partition");
    let new_launch =
        crate::ir::builders::cudagraph_launch(launch.loc(), callee, &launch.operands(), &results);
    launch.insert_before(new_launch);
    for (old, new) in launch.results().into_iter().zip(new_launch.results()) {
        old.replace_all_uses_with(new);
    }
    rewriter.erase(launch);
    let hoisted_result = new_launch.result(output);
    for (user, index) in buffer.uses() {
        if !partition.is_ancestor_of(user) {
            user.set_operand(index, hoisted_result);
        }
    }
    emit_remark(
        alloc.loc(),
        &format!(
            "cudagraph-hoist-allocs: allocation moved into partition {} as output #{output}: \
             allocated once at capture, same address on every replay",
            callee.print()
        ),
    );
}
