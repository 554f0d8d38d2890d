//! A `linalg.generic` that reduces the last loop of its rows with one
//! combining op (a sum, a max, a min), taken apart: what the row kernels
//! lower and what the fusions around the all-reduce match.

use crate::PassError;
use crate::analysis::linalg::{generic_body, generic_maps, loop_kinds};
use crate::ir::builders::FloatOp;
use crate::ir::melior_ext::{OperationExt, ValueExt, value_key};
use crate::ir::scalar::Scalar;
use melior::ir::{
    BlockLike, OperationRef, Value, operation::OperationLike, r#type::ShapedTypeLike,
};

/// A reduction's combining op: its `gpu.all_reduce` kind and the f32 bit
/// pattern of its identity.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Combiner {
    pub op: FloatOp,
    pub all_reduce: &'static str,
    pub identity: f32,
}

/// The combining ops a row reduction may use, as `combiner` names them.
pub const COMBINING_OPS: [&str; 5] = [
    "arith.addf",
    "arith.maximumf",
    "arith.maxnumf",
    "arith.minimumf",
    "arith.minnumf",
];

/// Every combiner, in `COMBINING_OPS`' order.
pub fn combiners() -> impl Iterator<Item = Combiner> {
    COMBINING_OPS.iter().filter_map(|name| combiner(name))
}

pub fn combiner(name: &str) -> Option<Combiner> {
    let (op, all_reduce, identity) = match name {
        "arith.addf" => (FloatOp::Add, "add", 0.0),
        "arith.maximumf" => (FloatOp::Maximum, "maximumf", f32::NEG_INFINITY),
        "arith.maxnumf" => (FloatOp::MaxNum, "maxnumf", f32::NEG_INFINITY),
        "arith.minimumf" => (FloatOp::Minimum, "minimumf", f32::INFINITY),
        "arith.minnumf" => (FloatOp::MinNum, "minnumf", f32::INFINITY),
        _ => return None,
    };
    Some(Combiner {
        op,
        all_reduce,
        identity,
    })
}

/// Which loops each operand's map reads, for a generic with `loops` loops
/// whose last one is reduced. `None` when the output does not keep the
/// parallel loops in order or a map is not a projection.
pub fn operand_dims(maps: &[(usize, Vec<usize>)], loops: usize) -> Option<Vec<Vec<usize>>> {
    let (output, inputs) = maps.split_last()?;
    let parallel: Vec<usize> = (0..loops - 1).collect();
    if output.0 != loops || output.1 != parallel {
        return None;
    }
    inputs
        .iter()
        .map(|(dims, results)| (*dims == loops).then(|| results.clone()))
        .collect()
}

/// A generic this pass lowers, taken apart.
pub struct RowReduction<'c, 'a> {
    pub inputs: Vec<Value<'c, 'a>>,
    pub output: Value<'c, 'a>,
    /// Loops each input reads, in the input's dimension order.
    pub input_dims: Vec<Vec<usize>>,
    pub loops: usize,
    pub combiner: Combiner,
    /// The body's combining op and which of its operands is the element.
    pub combine_op: OperationRef<'c, 'a>,
    pub element_operand: usize,
}

/// Why `op` is not a row reduction this pass lowers (`Err`), or `Ok(None)`
/// when it is no reduction at all.
pub fn match_row_reduction<'c, 'a>(
    op: OperationRef<'c, 'a>,
) -> Result<Option<RowReduction<'c, 'a>>, PassError> {
    let Some(reduced) = loop_kinds(op) else {
        return Ok(None);
    };
    if !reduced.iter().any(|r| *r) {
        return Ok(None);
    }
    let loops = reduced.len();
    if reduced[..loops - 1].iter().any(|r| *r) || !reduced[loops - 1] {
        return Err("only the last loop may be a reduction".into());
    }
    let maps = generic_maps(op)?;
    let operands: Vec<Value<'c, 'a>> = op.operands().collect();
    let input_dims = operand_dims(&maps, loops)
        .ok_or("has an output map that does not keep the parallel loops in order")?;
    let output = operands[operands.len() - 1];
    if operands.iter().any(|v| v.memref_type().is_none()) {
        return Err("has operands that are not memrefs".into());
    }
    let element = output
        .memref_type()
        .ok_or("has operands that are not memrefs")?
        .element();
    if !matches!(
        Scalar::of_type(element),
        Some(Scalar::F32 | Scalar::F16 | Scalar::Bf16)
    ) {
        return Err(format!("reduces into {element}; f32, f16 and bf16 are lowered").into());
    }
    if !input_dims.iter().any(|dims| dims.contains(&(loops - 1))) {
        return Err("has no input that spans the reduced loop".into());
    }
    let block = generic_body(op)?;
    let yield_op = block.terminator().ok_or("has no terminator")?;
    let acc: Value = block
        .argument(block.argument_count() - 1)
        .map_err(|_| "has no output argument")?
        .into();
    let combine_op = yield_op
        .operand(0)
        .ok()
        .and_then(|yielded| yielded.defining_op())
        .ok_or("yields a block argument, not a combination")?;
    let combine_name = combine_op.name_text();
    let combiner = combiner(&combine_name).ok_or_else(|| {
        format!(
            "combines with '{combine_name}'; addf, maximumf, maxnumf, minimumf and minnumf are \
             lowered"
        )
    })?;
    let acc_uses = acc.uses();
    let combined: Vec<Value> = combine_op.operands().collect();
    let element_operand = match combined.as_slice() {
        [_, b] if value_key(*b) == value_key(acc) => 0,
        [a, _] if value_key(*a) == value_key(acc) => 1,
        _ => return Err("does not combine the output's value with one element".into()),
    };
    if acc_uses.len() != 1 {
        return Err("reads the output's value other than to combine it".into());
    }
    Ok(Some(RowReduction {
        inputs: operands[..operands.len() - 1].to_vec(),
        output,
        input_dims,
        loops,
        combiner,
        combine_op,
        element_operand,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn combiners_know_their_identity() {
        assert_eq!(combiner("arith.addf").map(|c| c.identity), Some(0.0));
        assert_eq!(
            combiner("arith.maxnumf").map(|c| c.identity),
            Some(f32::NEG_INFINITY)
        );
        assert_eq!(
            combiner("arith.maximumf").map(|c| c.all_reduce),
            Some("maximumf")
        );
        assert_eq!(combiner("arith.mulf"), None);
        assert_eq!(combiner("arith.addi"), None);
    }

    #[test]
    fn operand_dims_need_the_parallel_loops_in_order() {
        // x: (d0, d1), weight: (d1), out: (d0).
        let maps = vec![(2, vec![0, 1]), (2, vec![1]), (2, vec![0])];
        assert_eq!(operand_dims(&maps, 2), Some(vec![vec![0, 1], vec![1]]));
        // A transposed output is not a row reduction.
        let maps = vec![(3, vec![0, 1, 2]), (3, vec![1, 0])];
        assert_eq!(operand_dims(&maps, 3), None);
    }
}
