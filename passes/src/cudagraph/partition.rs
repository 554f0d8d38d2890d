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
    PassDescriptor, PassFailed, PassOptions, TypedPass,
    ir::convert::{Rewrite, convert_all_typed},
    ir::melior_ext::{BlockExt, OperationExt, ValueExt, value_key as key},
    ir::module::{SymbolIndex, functions_with_bodies, sanitize},
};
use melior::{
    Context,
    dialect::ods,
    ir::{
        Attribute, Block, BlockLike, Identifier, OperationRef, Region, RegionLike, Type, Value,
        ValueLike,
        attribute::{
            ArrayAttribute, DictionaryAttribute, FlatSymbolRefAttribute, IntegerAttribute,
            StringAttribute, TypeAttribute,
        },
        operation::OperationLike,
        r#type::{FunctionType, IntegerType},
    },
};
use std::collections::HashMap;
use symm_dialects::{emit_remark, emit_warning};

/// A value as a map key (`value_key`).
type ValueKey = usize;

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

impl TypedPass for Partition {
    fn run_typed<'c>(
        context: &'c Context,
        module: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        let mut symbols = SymbolIndex::of(module);
        for function in functions_with_bodies(module) {
            if function.has_attribute("cudagraph.partition")
                || function.has_attribute("cudagraph.capturable")
            {
                continue;
            }
            partition_function(context, function, &mut symbols)?;
        }
        Ok(())
    }
}

fn partition_function<'c, 'a>(
    context: &'c Context,
    function: OperationRef<'c, 'a>,
    symbols: &mut SymbolIndex,
) -> Result<(), PassFailed> {
    let name = function.symbol_or_string("sym_name").unwrap_or_default();
    let blocks = function
        .region(0)
        .ok()
        .map(|region| {
            std::iter::successors(region.first_block(), |block| block.next_in_region()).count()
        })
        .unwrap_or(0);
    if blocks != 1 {
        emit_warning(
            function.location(),
            &format!(
                "cudagraph-partition: @{name} has {blocks} blocks; only single-block functions are \
                 partitioned, so it runs without CUDA graphs"
            ),
        );
        return Ok(());
    }
    let Some(body) = function.first_block() else {
        return Ok(());
    };
    let Some(terminator) = body.terminator() else {
        return Ok(());
    };
    sink_deallocs(&body.ops(), terminator, symbols);
    let mut ops = body.ops();
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
        function.set_attribute_to("cudagraph.capturable", Attribute::unit(context));
    }
    for (op, verdict) in ops.iter().zip(&verdicts) {
        // A free moved next to the host work after it splits nothing.
        if let Err(why) = verdict
            && !op.isa(OpKind::MemrefDealloc)
        {
            emit_remark(
                op.location(),
                &format!("cudagraph-partition: runs outside CUDA graphs: {why}"),
            );
        }
    }

    let (def_use, ids, mut values) = number_values(&ops);
    let later: Vec<u32> = terminator
        .operands()
        .filter_map(|v| ids.get(&key(v)).copied())
        .collect();
    let mut index = 0;
    let mut last = function;
    for segment in segments {
        let Segment::Partition(run) = segment else {
            continue;
        };
        let (input_ids, output_ids) = signature(&def_use, run.clone(), &later);
        let inputs: Vec<Value> = input_ids.iter().map(|id| values[id]).collect();
        let outputs: Vec<Value> = output_ids.iter().map(|id| values[id]).collect();
        let partition_name = symbols.fresh(&format!("{}_partition_{index}", sanitize(&name)));
        let outlined = Outlined {
            name: &partition_name,
            index,
        };
        let (partition, launch) = outline(context, last, &ops[run], (&inputs, &outputs), outlined);
        // Its collectives are sized by the function's token bound.
        if let Ok(bound) = function.attribute(crate::analysis::dynamic::MAX_TOKENS_ATTR) {
            partition.set_attribute_to(crate::analysis::dynamic::MAX_TOKENS_ATTR, bound);
        }
        // Later partitions read the launch's results, not the moved values.
        for (id, result) in output_ids.iter().zip(launch.results()) {
            values.insert(*id, result.into());
        }
        last = partition;
        index += 1;
    }
    // Constants that only partitions read were cloned there; the
    // function's copies go through the conversion driver's rewriter.
    let unused = |op: OperationRef| {
        op.result(0)
            .is_ok_and(|result| Value::from(result).uses().is_empty())
    };
    convert_all_typed(
        function,
        "cudagraph-partition left a constant only its partitions read",
        &|op| is_constant_like(op) && op.block() == Some(body) && unused(op),
        &mut |op, rewriter| {
            rewriter.erase_op(op);
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
    emit_remark(function.location(), &message);
    Ok(())
}

/// Moves each `memref.dealloc` (a free, which a graph cannot take for a
/// buffer it did not allocate) down to the next op that must run outside
/// a graph anyway, or to the terminator, so that frees do not split
/// capturable runs. Nothing may use a buffer after its free, so a later
/// free only keeps it longer.
fn sink_deallocs<'c, 'a>(
    ops: &[OperationRef<'c, 'a>],
    terminator: OperationRef<'c, 'a>,
    symbols: &SymbolIndex,
) {
    let stays_outside = |op: OperationRef| {
        op == terminator
            || (!op.isa(OpKind::MemrefDealloc) && classify(op, symbols) == OpClass::Fallback)
    };
    for (at, &op) in ops.iter().enumerate() {
        if !op.isa(OpKind::MemrefDealloc) {
            continue;
        }
        if let Some(&anchor) = ops[at + 1..].iter().find(|&&next| stays_outside(next)) {
            op.move_before_op(anchor);
        }
    }
}

/// Def-use facts of the top-level ops, with values numbered (by their
/// identity, and back). Values defined by constant-like ops are left out:
/// partitions clone those.
fn number_values<'c, 'a>(
    ops: &[OperationRef<'c, 'a>],
) -> (
    Vec<DefUse>,
    HashMap<ValueKey, u32>,
    HashMap<u32, Value<'c, 'a>>,
) {
    let mut ids: HashMap<ValueKey, u32> = HashMap::new();
    let mut values: HashMap<u32, Value<'c, 'a>> = HashMap::new();
    let mut id_of = |value: Value<'c, 'a>| {
        let next = ids.len() as u32;
        let id = *ids.entry(key(value)).or_insert(next);
        values.entry(id).or_insert(value);
        id
    };
    let mut facts = Vec::with_capacity(ops.len());
    for &op in ops {
        let mut fact = DefUse::default();
        for result in op.results() {
            fact.defines.push(id_of(result.into()));
        }
        for nested in std::iter::once(op).chain(op.descendants()) {
            for operand in nested.operands() {
                let outside = match operand.defining_op() {
                    Some(def) => !op.is_ancestor_of(def),
                    None => operand
                        .argument_of()
                        .and_then(|block| block.parent_operation())
                        .is_some_and(|owner| !op.is_ancestor_of(owner)),
                };
                let constant = operand.defining_op().is_some_and(is_constant_like);
                if outside && !constant {
                    fact.uses.push(id_of(operand));
                }
            }
        }
        facts.push(fact);
    }
    (facts, ids, values)
}

/// The name and number of a partition.
struct Outlined<'n> {
    name: &'n str,
    index: usize,
}

/// Moves `run` into a new function, placed after `after`, and launches it
/// in the run's place. Returns the new function and the launch.
fn outline<'c, 'a>(
    context: &'c Context,
    after: OperationRef<'c, 'a>,
    run: &[OperationRef<'c, 'a>],
    (inputs, outputs): (&[Value<'c, 'a>], &[Value<'c, 'a>]),
    Outlined { name, index }: Outlined,
) -> (OperationRef<'c, 'a>, OperationRef<'c, 'a>) {
    let loc = run[0].location();
    let input_types: Vec<Type> = inputs.iter().map(|v| v.r#type()).collect();
    let output_types: Vec<Type> = outputs.iter().map(|v| v.r#type()).collect();
    // Symmetric buffers keep their own, persistent addresses: the runtime
    // must never copy them into the graph's managed pool.
    let p2p: Vec<bool> = input_types
        .iter()
        .map(|&ty| symm_dialects::Allocator::of_type(ty).is_some())
        .collect();
    let arg_attrs: Vec<Attribute> = p2p
        .iter()
        .map(|&p2p| {
            let entries: &[(Identifier, Attribute)] = if p2p {
                &[(
                    Identifier::new(context, "cudagraph.p2p"),
                    Attribute::unit(context),
                )]
            } else {
                &[]
            };
            DictionaryAttribute::new(context, entries).into()
        })
        .collect();
    let function_type = FunctionType::new(context, &input_types, &output_types);
    let region = Region::new();
    region.append_block(Block::new(&[]));
    let built = ods::func::FuncOperation::builder(context, after.location())
        .body(region)
        .sym_name(StringAttribute::new(context, name))
        .function_type(TypeAttribute::new(function_type.into()))
        .build();
    let parent = after
        .block()
        .expect("a function sits in its module's block");
    let partition = parent.insert_operation_after(after, built.into());
    partition.set_attribute_to(
        "sym_visibility",
        StringAttribute::new(context, "private").into(),
    );
    let i64 = IntegerType::new(context, 64).into();
    partition.set_attribute_to(
        "cudagraph.partition",
        IntegerAttribute::new(i64, index as i64).into(),
    );
    if p2p.contains(&true) {
        partition.set_attribute_to("arg_attrs", ArrayAttribute::new(context, &arg_attrs).into());
    }
    let body = partition.first_block().expect("built with one block");
    let arguments: Vec<Value> = input_types
        .iter()
        .map(|&ty| body.add_argument(ty, loc))
        .collect();

    let anchor = run[run.len() - 1]
        .next_in_block()
        .expect("a terminator follows the run");
    // The run moves in before the partition's return (which reads only
    // values the run defines). Constants stay where they are; partitions
    // clone the ones they read.
    let ret = body.append_operation(ods::func::r#return(context, outputs, loc).into());
    for &op in run.iter().filter(|&&op| !is_constant_like(op)) {
        op.move_before_op(ret);
    }
    clone_constants(partition, body);
    for (input, argument) in inputs.iter().zip(&arguments) {
        replace_uses_inside(*input, *argument, partition);
    }

    let callee = FlatSymbolRefAttribute::new(context, name);
    let launch = symm_dialects::cudagraph::launch(context, &output_types, inputs, callee, loc);
    let launch = anchor
        .block()
        .expect("the run's ops sit in the function's block")
        .insert_operation_before(anchor, launch.into());
    for (output, result) in outputs.iter().zip(launch.results()) {
        for (user, operand) in output.uses() {
            if !partition.is_ancestor_of(user) {
                user.set_operand_to(operand, result.into());
            }
        }
    }
    (partition, launch)
}

/// Constant-like values from the function that the partition reads are
/// cloned into it, each once, first in its body.
fn clone_constants<'c, 'a>(partition: OperationRef<'c, 'a>, body: melior::ir::BlockRef<'c, 'a>) {
    let mut clones: HashMap<ValueKey, Value<'c, 'a>> = HashMap::new();
    for op in std::iter::once(partition).chain(partition.descendants()) {
        for index in 0..op.operand_count() {
            let Ok(operand) = op.operand(index) else {
                continue;
            };
            let Some(def) = operand.defining_op() else {
                continue;
            };
            if partition.is_ancestor_of(def) || !is_constant_like(def) {
                continue;
            }
            let clone = *clones.entry(key(operand)).or_insert_with(|| {
                let copy = body.insert_operation(0, def.cloned());
                copy.result(0).expect("a constant has its value").into()
            });
            op.set_operand_to(index, clone);
        }
    }
}

fn replace_uses_inside<'c, 'a>(
    value: Value<'c, 'a>,
    with: Value<'c, 'a>,
    scope: OperationRef<'c, 'a>,
) {
    for (user, operand) in value.uses() {
        if scope.is_ancestor_of(user) {
            user.set_operand_to(operand, with);
        }
    }
}
