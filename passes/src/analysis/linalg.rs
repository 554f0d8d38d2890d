//! Facts about linalg ops that several stages read: a generic's loops,
//! maps and body, a matmul's maps, zero constants, and whether a body can
//! move to the GPU on its own.

use crate::PassError;
use crate::ir::melior_ext::{BlockExt, OperationExt, ValueExt, dim_projection};
use crate::ir::op_kind::OpKind;
use crate::ir::{Blk, Op, Val};
use melior::ir::{
    AttributeLike, BlockRef, OperationRef, Value,
    attribute::{ArrayAttribute, FloatAttribute, IntegerAttribute},
    operation::OperationLike,
};

/// Unit attribute on a `linalg.matmul` whose output a folded zero fill
/// cleared: the matmul overwrites its output instead of adding to it.
pub const OVERWRITES_ATTR: &str = "symm.overwrites";

/// Whether each loop of `op` is a reduction (`None`: no iterator types).
pub fn iterator_kinds(op: Op) -> Option<Vec<bool>> {
    loop_kinds(crate::ir::bridge::operation(op))
}

/// `iterator_kinds` on melior's typed API.
pub fn loop_kinds(op: OperationRef) -> Option<Vec<bool>> {
    let types = ArrayAttribute::try_from(op.attribute("iterator_types").ok()?).ok()?;
    (0..types.len())
        .map(|i| {
            let kind = types.element(i).ok()?;
            // SAFETY: a kind query on a live attribute.
            match unsafe { symm_dialects::ffi::symmLinalgIteratorKind(kind.to_raw()) } {
                0 => Some(false),
                1 => Some(true),
                _ => None,
            }
        })
        .collect()
}

/// The generic's indexing maps as projections of its loops, after checking
/// it works on buffers with one output.
pub fn buffer_maps(op: Op) -> Result<Vec<(usize, Vec<usize>)>, PassError> {
    generic_maps(crate::ir::bridge::operation(op))
}

/// `buffer_maps` on melior's typed API.
pub fn generic_maps(op: OperationRef) -> Result<Vec<(usize, Vec<usize>)>, PassError> {
    if op.result_count() != 0 {
        return Err("works on tensors; bufferize first".into());
    }
    let segments = op.operand_segments();
    if segments.len() != 2 || segments[1] != 1 {
        return Err("has more than one output".into());
    }
    let maps = op
        .attribute("indexing_maps")
        .ok()
        .and_then(|maps| ArrayAttribute::try_from(maps).ok())
        .ok_or("has no indexing maps")?;
    (0..maps.len())
        .map(|i| maps.element(i).ok().and_then(dim_projection))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| "has an indexing map that is not a projection of its loops".into())
}

/// The generic's body block.
pub fn body(op: Op) -> Result<Blk, PassError> {
    generic_body(crate::ir::bridge::operation(op)).map(Blk::from)
}

/// `body` on melior's typed API.
pub fn generic_body<'c, 'a>(op: OperationRef<'c, 'a>) -> Result<BlockRef<'c, 'a>, PassError> {
    let block = op.first_block().ok_or("has no body")?;
    let ops = block.ops();
    if ops.iter().any(|o| o.region_count() > 0) {
        return Err("has ops with regions in its body".into());
    }
    if ops.iter().any(|o| o.isa(OpKind::LinalgIndex)) {
        return Err("reads its loop indices (linalg.index)".into());
    }
    Ok(block)
}

/// Whether a `linalg.matmul` or `linalg.batch_matmul` reads its operands
/// as written (no transpose or broadcast in its `indexing_maps`, if it has
/// them: the parser gives them the default ones).
pub fn has_default_maps(op: Op) -> bool {
    default_maps(crate::ir::bridge::operation(op))
}

/// `has_default_maps` on melior's typed API: no `indexing_maps`, or the
/// named op's own maps (a matmul's `(d0, d2)`, `(d2, d1)`, `(d0, d1)` of
/// `(d0, d1, d2)`; a batch matmul's with the batch dimension first), read
/// from the maps themselves.
pub fn default_maps(op: OperationRef) -> bool {
    let expected: &[&[usize]] = if op.isa(OpKind::LinalgBatchMatmul) {
        &[&[0, 1, 3], &[0, 3, 2], &[0, 1, 2]]
    } else {
        &[&[0, 2], &[2, 1], &[0, 1]]
    };
    let Ok(maps) = op.attribute("indexing_maps") else {
        return true;
    };
    let Ok(maps) = ArrayAttribute::try_from(maps) else {
        return false;
    };
    let dims = expected[0].len() + 1;
    maps.len() == expected.len()
        && expected.iter().enumerate().all(|(i, results)| {
            maps.element(i)
                .ok()
                .and_then(dim_projection)
                .is_some_and(|(n, found)| n == dims && found == *results)
        })
}

/// Whether `value` is an `arith.constant` zero (integer or float, +0.0).
pub fn is_zero_constant(value: Val) -> bool {
    zero_constant(crate::ir::bridge::value(value))
}

/// `is_zero_constant` on melior's typed API.
pub fn zero_constant(value: Value) -> bool {
    let Some(attribute) = value
        .defining_op()
        .filter(|def| def.isa(OpKind::Constant))
        .and_then(|def| def.attribute("value").ok())
    else {
        return false;
    };
    if let Ok(integer) = IntegerAttribute::try_from(attribute) {
        return integer.value() == 0;
    }
    FloatAttribute::try_from(attribute)
        .is_ok_and(|float| float.value() == 0.0 && float.value().is_sign_positive())
}

/// The body becomes a function of its own on the GPU: only constants may
/// come from outside.
pub fn captures_only_constants(generic: Op) -> Result<(), &'static str> {
    body_captures_only_constants(crate::ir::bridge::operation(generic))
}

/// `captures_only_constants` on melior's typed API.
pub fn body_captures_only_constants(generic: OperationRef) -> Result<(), &'static str> {
    for op in generic.descendants() {
        for operand in op.operands() {
            if let Some(def) = operand.defining_op()
                && !generic.is_ancestor_of(def)
                && !def.isa(OpKind::Constant)
            {
                return Err("its body uses a value from outside that is not a constant");
            }
        }
    }
    Ok(())
}
