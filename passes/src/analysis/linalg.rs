//! Facts about linalg ops that several stages read: a generic's loops,
//! maps and body, a matmul's maps, zero constants, and whether a body can
//! move to the GPU on its own.

use crate::PassError;
use crate::ir::melior_ext::{BlockExt, OperationExt, ValueExt, dim_projection};
use crate::ir::op_kind::OpKind;
use melior::ir::{
    AttributeLike, BlockRef, OperationRef, Value,
    attribute::{ArrayAttribute, FloatAttribute, IntegerAttribute},
    operation::OperationLike,
};

/// Unit attribute on a `linalg.matmul` whose output a folded zero fill
/// cleared: the matmul overwrites its output instead of adding to it.
pub const OVERWRITES_ATTR: &str = "symm.overwrites";

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
