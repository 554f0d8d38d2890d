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
use symm_protocol::abi::LayoutCode;

/// Unit attribute on a `linalg.matmul` whose output a folded zero fill
/// cleared: the matmul overwrites its output instead of adding to it.
pub const OVERWRITES_ATTR: &str = "symm.overwrites";

/// Integer attribute on a `linalg.matmul`: the fewest rows of the calls
/// that reach it. A split-K matmul's whole form runs only for calls above
/// the rows its slices take, so it needs no kernel for fewer
/// (`symm-linalg-matmul-to-gpu`).
pub const MIN_ROWS_ATTR: &str = "symm.min_rows";

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
    matmul_layout(op) == Some(LayoutCode::RowMajor)
}

/// How a `linalg.matmul` or `linalg.batch_matmul` reads its inputs, from
/// its indexing maps: as written (the default maps), or either input
/// transposed, a as `(d2, d0)` (k x m) or b as `(d1, d2)` (n x k,
/// nn.Linear's weight), its output always `(d0, d1)`; the batch dimension
/// first in each of a batch matmul's. `None` for any other maps
/// (broadcasts, a transposed output).
pub fn matmul_layout(op: OperationRef) -> Option<LayoutCode> {
    let batch: &[usize] = if op.isa(OpKind::LinalgBatchMatmul) {
        &[0]
    } else {
        &[]
    };
    let (m, n, k) = (batch.len(), batch.len() + 1, batch.len() + 2);
    let Ok(maps) = op.attribute("indexing_maps") else {
        return Some(LayoutCode::RowMajor);
    };
    let maps = ArrayAttribute::try_from(maps).ok()?;
    if maps.len() != 3 {
        return None;
    }
    let map = |i: usize| -> Option<Vec<usize>> {
        let (loops, results) = maps.element(i).ok().and_then(dim_projection)?;
        (loops == k + 1 && results.starts_with(batch)).then(|| results[batch.len()..].to_vec())
    };
    let transposed = |found: Vec<usize>, rows: usize, columns: usize| {
        if found == [rows, columns] {
            Some(false)
        } else if found == [columns, rows] {
            Some(true)
        } else {
            None
        }
    };
    let a_transposed = transposed(map(0)?, m, k)?;
    let b_transposed = transposed(map(1)?, k, n)?;
    if map(2)? != [m, n] {
        return None;
    }
    Some(LayoutCode::of(a_transposed, b_transposed))
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

#[cfg(test)]
mod tests {
    use super::*;
    use melior::ir::{BlockLike, Module};

    /// The layout of each matmul of `body` (a function's), in order.
    fn layouts(body: &str) -> Vec<Option<LayoutCode>> {
        let context = symm_dialects::create_context();
        let module = Module::parse(&context, body).expect("parses");
        let function = module.body().first_operation().expect("a function");
        let block = function.first_block().expect("a body");
        block
            .ops()
            .into_iter()
            .filter(|op| op.isa(OpKind::LinalgMatmul) || op.isa(OpKind::LinalgBatchMatmul))
            .map(matmul_layout)
            .collect()
    }

    #[test]
    fn a_matmul_layout_reads_which_input_is_transposed() {
        let found = layouts(
            r#"
            #a = affine_map<(m, n, k) -> (m, k)>
            #at = affine_map<(m, n, k) -> (k, m)>
            #b = affine_map<(m, n, k) -> (k, n)>
            #bt = affine_map<(m, n, k) -> (n, k)>
            #c = affine_map<(m, n, k) -> (m, n)>
            #ct = affine_map<(m, n, k) -> (n, m)>
            #row = affine_map<(m, n, k) -> (k)>
            func.func @f(%a: memref<4x8xf32>, %at: memref<8x4xf32>, %b: memref<8x16xf32>,
                         %bt: memref<16x8xf32>, %c: memref<4x16xf32>, %ct: memref<16x4xf32>,
                         %v: memref<8xf32>, %qa: memref<2x4x8xf32>, %qb: memref<2x16x8xf32>,
                         %qc: memref<2x4x16xf32>) {
              linalg.matmul ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
              linalg.matmul indexing_maps = [#a, #bt, #c]
                ins(%a, %bt : memref<4x8xf32>, memref<16x8xf32>) outs(%c : memref<4x16xf32>)
              linalg.matmul indexing_maps = [#at, #b, #c]
                ins(%at, %b : memref<8x4xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
              linalg.matmul indexing_maps = [#at, #bt, #c]
                ins(%at, %bt : memref<8x4xf32>, memref<16x8xf32>) outs(%c : memref<4x16xf32>)
              linalg.matmul indexing_maps = [#a, #b, #ct]
                ins(%a, %b : memref<4x8xf32>, memref<8x16xf32>) outs(%ct : memref<16x4xf32>)
              linalg.matmul indexing_maps = [#row, #b, #c]
                ins(%v, %b : memref<8xf32>, memref<8x16xf32>) outs(%c : memref<4x16xf32>)
              linalg.batch_matmul indexing_maps = [
                  affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>,
                  affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>,
                  affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
                ins(%qa, %qb : memref<2x4x8xf32>, memref<2x16x8xf32>) outs(%qc : memref<2x4x16xf32>)
              linalg.batch_matmul indexing_maps = [
                  affine_map<(d0, d1, d2, d3) -> (d1, d3)>,
                  affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>,
                  affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>]
                ins(%a, %qb : memref<4x8xf32>, memref<2x16x8xf32>) outs(%qc : memref<2x4x16xf32>)
              return
            }
            "#,
        );
        use LayoutCode::*;
        assert_eq!(
            found,
            [
                Some(RowMajor),
                Some(TransposedB),
                Some(TransposedA),
                Some(TransposedBoth),
                None, // a transposed output
                None, // a broadcast lhs
                Some(TransposedB),
                None, // a lhs broadcast over the batch
            ]
        );
    }
}
