//! Facts about linalg ops that several stages read: a generic's loops,
//! maps and body, a matmul's maps, zero constants, and whether a body can
//! move to the GPU on its own.

use crate::PassError;
use crate::ir::op_kind::OpKind;
use crate::ir::{Attr, Blk, Op, Val};

/// Unit attribute on a `linalg.matmul` whose output a folded zero fill
/// cleared: the matmul overwrites its output instead of adding to it.
pub const OVERWRITES_ATTR: &str = "symm.overwrites";

/// Whether each loop of `op` is a reduction (`None`: no iterator types).
pub fn iterator_kinds(op: Op) -> Option<Vec<bool>> {
    let types = op.attr("iterator_types")?;
    (0..types.array_len())
        .map(|i| types.array_element(i)?.is_reduction_iterator())
        .collect()
}

/// The generic's indexing maps as projections of its loops, after checking
/// it works on buffers with one output.
pub fn buffer_maps(op: Op) -> Result<Vec<(usize, Vec<usize>)>, PassError> {
    if op.num_results() != 0 {
        return Err("works on tensors; bufferize first".into());
    }
    let segments = op.operand_segments();
    if segments.len() != 2 || segments[1] != 1 {
        return Err("has more than one output".into());
    }
    let maps_attr = op.attr("indexing_maps").ok_or("has no indexing maps")?;
    (0..maps_attr.array_len())
        .map(|i| maps_attr.array_element(i).and_then(Attr::dim_projection))
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| "has an indexing map that is not a projection of its loops".into())
}

/// The generic's body block.
pub fn body(op: Op) -> Result<Blk, PassError> {
    let block = op.region_blocks(0).first().copied().ok_or("has no body")?;
    if block.ops().iter().any(|o| o.num_regions() > 0) {
        return Err("has ops with regions in its body".into());
    }
    if block.ops().iter().any(|o| o.isa(OpKind::LinalgIndex)) {
        return Err("reads its loop indices (linalg.index)".into());
    }
    Ok(block)
}

/// Whether a `linalg.matmul` or `linalg.batch_matmul` reads its operands
/// as written (no transpose or broadcast in its `indexing_maps`, if it has
/// them: the parser gives them the default ones).
pub fn has_default_maps(op: Op) -> bool {
    let default_maps: &[&str] = if op.isa(OpKind::LinalgBatchMatmul) {
        &[
            "affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>",
            "(d0, d1, d2, d3) -> (d0, d3, d2)",
            "(d0, d1, d2, d3) -> (d0, d1, d2)",
        ]
    } else {
        &[
            "affine_map<(d0, d1, d2) -> (d0, d2)>",
            "(d0, d1, d2) -> (d2, d1)",
        ]
    };
    op.attr("indexing_maps").is_none_or(|maps| {
        let text = maps.print();
        default_maps.iter().all(|map| text.contains(map))
    })
}

/// Whether `value` is an `arith.constant` zero (integer or float, +0.0).
pub fn is_zero_constant(value: Val) -> bool {
    value.def().is_some_and(|def| {
        def.isa(OpKind::Constant)
            && def.attr("value").is_some_and(|attr| {
                let text = attr.print();
                let number = text.split(':').next().unwrap_or("").trim();
                matches!(number, "0" | "0.0" | "0.000000e+00")
            })
    })
}

/// The body becomes a function of its own on the GPU: only constants may
/// come from outside.
pub fn captures_only_constants(generic: Op) -> Result<(), &'static str> {
    for op in generic.walk().into_iter().skip(1) {
        for operand in op.operands() {
            if let Some(def) = operand.def()
                && !generic.is_ancestor_of(def)
                && !def.isa(OpKind::Constant)
            {
                return Err("its body uses a value from outside that is not a constant");
            }
        }
    }
    Ok(())
}
