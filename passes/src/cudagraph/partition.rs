//! `cudagraph-partition`: outlines maximal capturable runs of each host
//! function into partition functions (`cudagraph.partition = N`) and
//! launches them with `cudagraph.launch`; fallback regions stay in the
//! function, between the launches, in program order. A function that is
//! capturable as a whole gets `cudagraph.capturable` and no partitions.

use super::{
    classify::{classify, is_constant_like, verdict},
    runs::{DefUse, OpClass, Segment, segments, signature},
};
use crate::ir::op_kind::OpKind;
use crate::{
    PassDescriptor, PassFailed, PassOptions, SymmPass,
    ir::builders::{At, Builder},
    ir::convert::{Rewrite, convert_all},
    ir::module::{SymbolIndex, defined_functions, sanitize},
    ir::{Attr, Op, Ty, Val, emit_remark, emit_warning},
};
use std::collections::HashMap;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<Partition>(
    c"cudagraph-partition",
    c"CudaGraphPartition",
    c"Outline maximal CUDA-graph-capturable regions of each function into partitions run by \
      cudagraph.launch",
    c"builtin.module",
    &[],
    file!(),
);

pub struct Partition;

impl SymmPass for Partition {
    fn run(module: Op, _options: &PassOptions) -> Result<(), PassFailed> {
        let mut symbols = SymbolIndex::new(module);
        for function in defined_functions(module) {
            if function.attr("cudagraph.partition").is_some()
                || function.attr("cudagraph.capturable").is_some()
            {
                continue;
            }
            partition_function(function, &mut symbols)?;
        }
        Ok(())
    }
}

fn partition_function(function: Op, symbols: &mut SymbolIndex) -> Result<(), PassFailed> {
    let name = function.symbol_name().unwrap_or_default();
    let blocks = function.region_blocks(0);
    if blocks.len() != 1 {
        emit_warning(
            function.loc(),
            &format!(
                "cudagraph-partition: @{name} has {} blocks; only single-block functions are \
                 partitioned, so it runs without CUDA graphs",
                blocks.len()
            ),
        );
        return Ok(());
    }
    let Some(terminator) = blocks[0].terminator() else {
        return Ok(());
    };
    sink_deallocs(&blocks[0].ops(), terminator, symbols);
    let mut ops = blocks[0].ops();
    ops.pop();
    let verdicts: Vec<_> = ops.iter().map(|&op| verdict(op, symbols)).collect();
    let classes: Vec<OpClass> = verdicts
        .iter()
        .map(|v| v.clone().unwrap_or(OpClass::Fallback))
        .collect();
    let found = segments(&classes);
    let whole = found.is_none();
    let segments = found.unwrap_or_else(|| {
        // Capturable as a whole: the special case of one partition.
        let has_work = classes.contains(&OpClass::Capturable { work: true });
        if has_work {
            vec![Segment::Partition(0..ops.len())]
        } else {
            vec![Segment::Outside(0..ops.len())]
        }
    });
    if whole && !ops.is_empty() {
        function.set_attr("cudagraph.capturable", function.ctx().unit());
    }
    for (op, verdict) in ops.iter().zip(&verdicts) {
        // A free moved next to the host work after it splits nothing.
        if let Err(why) = verdict
            && !op.isa(OpKind::MemrefDealloc)
        {
            emit_remark(
                op.loc(),
                &format!("cudagraph-partition: runs outside CUDA graphs: {why}"),
            );
        }
    }

    let (def_use, ids) = number_values(&ops);
    let later: Vec<u32> = terminator
        .operands()
        .iter()
        .filter_map(|v| ids.get(v).copied())
        .collect();
    let mut values: HashMap<u32, Val> = ids.iter().map(|(&value, &id)| (id, value)).collect();
    let mut index = 0;
    let mut last = function;
    for segment in segments {
        let Segment::Partition(run) = segment else {
            continue;
        };
        let (input_ids, output_ids) = signature(&def_use, run.clone(), &later);
        let inputs: Vec<Val> = input_ids.iter().map(|id| values[id]).collect();
        let outputs: Vec<Val> = output_ids.iter().map(|id| values[id]).collect();
        let partition_name = symbols.fresh(&format!("{}_partition_{index}", sanitize(&name)));
        let (partition, launch) =
            outline(last, &ops[run], &inputs, &outputs, &partition_name, index);
        // Its collectives are sized by the function's token bound.
        if let Some(bound) = function.attr(crate::analysis::dynamic::MAX_TOKENS_ATTR) {
            partition.set_attr(crate::analysis::dynamic::MAX_TOKENS_ATTR, bound);
        }
        // Later partitions read the launch's results, not the moved values.
        for (id, result) in output_ids.iter().zip(launch.results()) {
            values.insert(*id, result);
        }
        last = partition;
        index += 1;
    }
    // Constants that only partitions read were cloned there; the
    // function's copies go through the conversion driver's rewriter.
    let body = blocks[0];
    convert_all(
        function,
        "cudagraph-partition left a constant only its partitions read",
        &|op| is_constant_like(op) && op.block() == Some(body) && op.result(0).uses().is_empty(),
        &mut |op, rewriter| {
            rewriter.erase(op);
            Rewrite::Lowered
        },
    )?;
    if index == 0 {
        return Ok(());
    }
    let message = if whole {
        format!("cudagraph-partition: @{name} is capturable as a whole: one CUDA-graph partition")
    } else {
        format!(
            "cudagraph-partition: @{name} runs {index} CUDA-graph partition{} between fallback \
             regions",
            if index == 1 { "" } else { "s" }
        )
    };
    emit_remark(function.loc(), &message);
    Ok(())
}

/// Moves each `memref.dealloc` (a free, which a graph cannot take for a
/// buffer it did not allocate) down to the next op that must run outside
/// a graph anyway, or to the terminator, so that frees do not split
/// capturable runs. Nothing may use a buffer after its free, so a later
/// free only keeps it longer.
fn sink_deallocs(ops: &[Op], terminator: Op, symbols: &SymbolIndex) {
    let stays_outside = |op: Op| {
        op == terminator
            || (!op.isa(OpKind::MemrefDealloc) && classify(op, symbols) == OpClass::Fallback)
    };
    for (at, &op) in ops.iter().enumerate() {
        if !op.isa(OpKind::MemrefDealloc) {
            continue;
        }
        if let Some(&anchor) = ops[at + 1..].iter().find(|&&next| stays_outside(next)) {
            op.move_before(anchor);
        }
    }
}

/// Def-use facts of the top-level ops, with values numbered. Values defined
/// by constant-like ops are left out: partitions clone those.
fn number_values(ops: &[Op]) -> (Vec<DefUse>, HashMap<Val, u32>) {
    let mut ids: HashMap<Val, u32> = HashMap::new();
    let id_of = |value: Val, ids: &mut HashMap<Val, u32>| {
        let next = ids.len() as u32;
        *ids.entry(value).or_insert(next)
    };
    let mut facts = Vec::with_capacity(ops.len());
    for &op in ops {
        let mut fact = DefUse::default();
        for result in op.results() {
            fact.defines.push(id_of(result, &mut ids));
        }
        for nested in op.walk() {
            for operand in nested.operands() {
                let outside = match operand.def() {
                    Some(def) => !op.is_ancestor_of(def),
                    None => operand
                        .block_arg()
                        .and_then(|(block, _)| block.parent_op())
                        .is_some_and(|owner| !op.is_ancestor_of(owner)),
                };
                let constant = operand.def().is_some_and(is_constant_like);
                if outside && !constant {
                    fact.uses.push(id_of(operand, &mut ids));
                }
            }
        }
        facts.push(fact);
    }
    (facts, ids)
}

/// Moves `run` into a new function, placed after `after`, and launches it
/// in the run's place. Returns the new function and the launch.
fn outline(
    after: Op,
    run: &[Op],
    inputs: &[Val],
    outputs: &[Val],
    name: &str,
    index: usize,
) -> (Op, Op) {
    let ctx = after.ctx();
    let loc = run[0].loc();
    let input_types: Vec<Ty> = inputs.iter().map(|v| v.ty()).collect();
    let output_types: Vec<Ty> = outputs.iter().map(|v| v.ty()).collect();
    // Symmetric buffers keep their own, persistent addresses: the runtime
    // must never copy them into the graph's managed pool.
    let p2p = input_types.iter().map(|ty| ty.allocator().is_some());
    let arg_attrs: Vec<Attr> = p2p
        .clone()
        .map(|p2p| {
            if p2p {
                ctx.dictionary(&[("cudagraph.p2p", ctx.unit())])
            } else {
                ctx.dictionary(&[])
            }
        })
        .collect();
    let mut extra = vec![
        ("sym_visibility", ctx.string("private")),
        ("cudagraph.partition", ctx.i64(index as i64)),
    ];
    if p2p.into_iter().any(|p2p| p2p) {
        extra.push(("arg_attrs", ctx.array_attr(&arg_attrs)));
    }
    let partition = crate::ir::builders::func(
        ctx,
        after.loc(),
        name,
        ctx.function_type(&input_types, &output_types),
        &extra,
    );
    after.insert_after(partition);
    let body = partition.entry_block().expect("built with one block");
    let arguments: Vec<Val> = input_types
        .iter()
        .map(|&ty| body.add_arg(ty, loc))
        .collect();

    let anchor = run[run.len() - 1]
        .next()
        .expect("a terminator follows the run");
    // Constants stay where they are; partitions clone the ones they read.
    for &op in run.iter().filter(|&&op| !is_constant_like(op)) {
        op.remove_from_parent();
        body.append(op);
    }
    clone_constants(partition);
    for (input, argument) in inputs.iter().zip(&arguments) {
        replace_uses_inside(*input, *argument, partition);
    }
    body.append(crate::ir::builders::func_return(loc, outputs));

    let launch =
        crate::ir::builders::cudagraph_launch(loc, ctx.symbol(name), inputs, &output_types);
    Builder::new(ctx, loc, At::Before(anchor)).insert(launch);
    for (output, result) in outputs.iter().zip(launch.results()) {
        for (user, operand) in output.uses() {
            if !partition.is_ancestor_of(user) {
                user.set_operand(operand, result);
            }
        }
    }
    (partition, launch)
}

/// Constant-like values from the function that the partition reads are
/// cloned into it.
fn clone_constants(partition: Op) {
    let body = partition.entry_block().expect("built with one block");
    let mut clones: HashMap<Val, Val> = HashMap::new();
    for op in partition.walk() {
        for (index, operand) in op.operands().into_iter().enumerate() {
            let Some(def) = operand.def() else { continue };
            if partition.is_ancestor_of(def) || !is_constant_like(def) {
                continue;
            }
            let clone = *clones.entry(operand).or_insert_with(|| {
                let copy = def.clone_op();
                body.prepend(copy);
                copy.result(0)
            });
            op.set_operand(index, clone);
        }
    }
}

fn replace_uses_inside(value: Val, with: Val, scope: Op) {
    for (user, operand) in value.uses() {
        if scope.is_ancestor_of(user) {
            user.set_operand(operand, with);
        }
    }
}
