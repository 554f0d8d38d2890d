//! What the passes that turn a `linalg.generic` into a `gpu.launch` share
//! (`symm-linalg-rows-to-gpu`, `symm-linalg-elementwise-to-gpu`): the
//! launch and copying the generic's body into the kernel (taking it apart
//! is `analysis::linalg`).

use crate::ir::builders::{Cast, IntOp};
use crate::ir::melior_ext::{BlockExt, OperationExt, value_key};
use crate::ir::op_kind::OpKind;
use crate::ir::scalar::Scalar;
use crate::ir::typed_builder::Inserter;
use melior::ir::{
    BlockLike, BlockRef, OperationRef, RegionLike, Type, Value, ValueLike, operation::OperationLike,
};
use std::collections::HashMap;

/// Values of the generic's body (block arguments, results of its ops),
/// keyed by `value_key`, to what stands for them in the kernel.
pub type Mapping<'c, 'a> = HashMap<usize, Value<'c, 'a>>;

/// The value `mapping` gives `value`, or `value` itself.
pub fn mapped<'c, 'a>(mapping: &Mapping<'c, 'a>, value: Value<'c, 'a>) -> Value<'c, 'a> {
    mapping.get(&value_key(value)).copied().unwrap_or(value)
}

/// The `linalg.generic` ops of `function` outside kernels (those inside
/// are left to the upstream mapping), listed before any is rewritten:
/// erasing a generic frees the ops of its body, which a walk lists after
/// it.
pub fn host_generics<'c, 'a>(function: OperationRef<'c, 'a>) -> Vec<OperationRef<'c, 'a>> {
    function
        .descendants()
        .into_iter()
        .filter(|op| is_host_generic(*op))
        .collect()
}

/// Whether `op` is a `linalg.generic` outside any `gpu.launch`.
pub fn is_host_generic(op: OperationRef) -> bool {
    op.isa(OpKind::LinalgGeneric)
        && !std::iter::successors(op.parent_operation(), |p| p.parent_operation())
            .any(|p| p.isa(OpKind::GpuLaunch))
}

/// `value` as f32 (extended from a 16-bit float).
pub fn widened<'c, 'a>(at: &mut Inserter<'c, 'a>, value: Value<'c, 'a>) -> Value<'c, 'a> {
    if Scalar::of_type(value.r#type()) == Some(Scalar::F32) {
        value
    } else {
        let f32 = Type::float32(at.context);
        at.convert(Cast::ExtF, value, f32)
    }
}

/// Copies the body's ops except `skip` and its terminator, with `mapping`
/// (block arguments to values) extended by each copy's results; returns
/// the terminator's operands as mapped.
pub fn inline_body<'c, 'a>(
    at: &mut Inserter<'c, 'a>,
    body: BlockRef<'c, 'a>,
    mapping: &mut Mapping<'c, 'a>,
    skip: Option<OperationRef<'c, 'a>>,
) -> Vec<Value<'c, 'a>> {
    let mut yielded = Vec::new();
    for body_op in body.ops() {
        if skip.is_some_and(|skip| skip == body_op) {
            continue;
        }
        if body_op.isa(OpKind::LinalgYield) {
            yielded = body_op.operands().map(|v| mapped(mapping, v)).collect();
            continue;
        }
        let copy = at.put(body_op.cloned());
        for (i, operand) in body_op.operands().enumerate() {
            if let Some(mapped) = mapping.get(&value_key(operand)) {
                copy.set_operand_to(i, *mapped);
            }
        }
        for (old, new) in body_op.results().zip(copy.results()) {
            mapping.insert(value_key(old.into()), new.into());
        }
    }
    yielded
}

/// The `scf.yield` that ends region `region` of `op` (an `scf.if` built
/// with its branches' yields).
pub fn branch_yield<'c, 'a>(op: OperationRef<'c, 'a>, region: usize) -> OperationRef<'c, 'a> {
    op.region(region)
        .ok()
        .and_then(|region| region.first_block())
        .and_then(|block| block.terminator())
        .expect("internal: built with its yield")
}

/// `scf.if condition` at the host inserter's point, with `fallback` (ops
/// already built) moved into its `else` branch, in order; returns an
/// inserter at the end of its `then` branch.
pub fn unless_fallback<'c, 'a>(
    host: &mut Inserter<'c, 'a>,
    condition: Value<'c, 'a>,
    fallback: &[OperationRef<'c, 'a>],
) -> Inserter<'c, 'a> {
    let if_op = host.if_then(condition, true);
    let else_yield = branch_yield(if_op, 1);
    for op in fallback {
        op.move_before_op(else_yield);
    }
    Inserter::before_at(host.context, host.location, branch_yield(if_op, 0))
        .expect("internal: a yield is in its block")
}

/// A one-dimensional `gpu.launch`: its body and the body's block and
/// thread ids (x only) and block size.
pub struct Launch<'c, 'a> {
    pub body: BlockRef<'c, 'a>,
    pub block_x: Value<'c, 'a>,
    pub thread_x: Value<'c, 'a>,
    pub block_dim_x: Value<'c, 'a>,
}

/// A `gpu.launch` of `blocks` x `threads` at the host inserter's point.
pub fn launch<'c, 'a>(
    host: &mut Inserter<'c, 'a>,
    blocks: Value<'c, 'a>,
    threads: Value<'c, 'a>,
) -> Launch<'c, 'a> {
    let one = host.index(1);
    let op = host.gpu_launch([blocks, one, one], [threads, one, one]);
    let body = op.first_block().expect("internal: a launch has its body");
    let index = Type::index(host.context);
    let ids: Vec<Value> = (0..12)
        .map(|_| body.add_argument(index, host.location))
        .collect();
    Launch {
        body,
        block_x: ids[0],
        thread_x: ids[3],
        block_dim_x: ids[9],
    }
}

/// The indices of each loop but the last, from a flat row number
/// (row-major over `extents`, the loops' sizes).
pub fn unflatten<'c, 'a>(
    at: &mut Inserter<'c, 'a>,
    flat: Value<'c, 'a>,
    extents: &[Value<'c, 'a>],
) -> Vec<Value<'c, 'a>> {
    let mut ids = vec![flat; extents.len()];
    let mut rest = flat;
    for d in (0..extents.len()).rev() {
        if d == 0 {
            ids[d] = rest;
        } else {
            ids[d] = at.int_op(IntOp::RemU, rest, extents[d]);
            rest = at.int_op(IntOp::DivU, rest, extents[d]);
        }
    }
    ids
}
