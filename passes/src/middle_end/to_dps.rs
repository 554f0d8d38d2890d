//! `symm-mem-to-dps` (seed 001 [1/5]): every functional collective becomes
//! its destination-passing `_out` form, writing into an explicit
//! `memref.alloc`. The allocation is then visible to planning, which can
//! reuse it across layers.
//!
//! A pattern per functional op, applied by MLIR's walk-based pattern
//! driver: the functional op is replaced through the driver's rewriter,
//! so the walk never visits it again (`ir::patterns`).

use crate::{
    PassDescriptor, PassFailed, PassOptions, TypedPass,
    ir::melior_ext::OperationExt,
    ir::op_kind::OpKind,
    ir::patterns::{RewriteOne, walk_and_apply},
};
use melior::{
    Context, RewriterBase,
    dialect::ods,
    ir::{
        OperationRef, Type, Value, ValueLike,
        attribute::{DenseI32ArrayAttribute, FlatSymbolRefAttribute, IntegerAttribute},
        operation::{OperationLike, OperationMutLike},
        r#type::{DimSize, MemRefType, ShapedTypeLike},
    },
};
use symm_dialects::symm_mem;

pub static DESCRIPTOR: PassDescriptor = PassDescriptor::new::<ToDps>(
    c"symm-mem-to-dps",
    c"SymmMemToDps",
    c"Rewrite functional symm_mem collectives into their _out forms writing into explicit allocations",
    c"func.func",
    &[],
    file!(),
);

pub struct ToDps;

impl TypedPass for ToDps {
    fn run_typed<'c>(
        context: &'c Context,
        function: OperationRef<'c, '_>,
        _options: &PassOptions,
    ) -> Result<(), PassFailed> {
        const PATTERNS: [(&str, RewriteOne); 2] = [
            ("symm_mem.all_reduce", out_form),
            ("symm_mem.all_gather_matmul", out_form),
        ];
        walk_and_apply(context, function, &PATTERNS);
        Ok(())
    }
}

/// `op` (an all-reduce or all-gather matmul) as its out form, writing
/// into a new allocation of its result's type.
fn out_form<'c, 'a>(
    context: &'c Context,
    op: OperationRef<'c, 'a>,
    rewriter: RewriterBase<'c, 'a>,
) -> bool {
    let gathers = op.isa(OpKind::AllGatherMatmul);
    let (Ok(result), Ok(input), Ok(group)) = (
        op.result(0),
        op.operand(0),
        op.attribute("group")
            .and_then(FlatSymbolRefAttribute::try_from),
    ) else {
        return false;
    };
    let Ok(result_type) = MemRefType::try_from(result.r#type()) else {
        return false;
    };
    let location = op.location();
    rewriter.set_insertion_point_before(op);
    let index = Type::index(context);
    let put = |built: melior::ir::Operation<'c>| -> Option<Value<'c, '_>> {
        rewriter.insert(built).result(0).ok().map(Value::from)
    };
    let dim = |source: Value<'c, '_>, at: usize| -> Option<Value<'c, '_>> {
        let at = IntegerAttribute::new(index, at as i64).into();
        let at = put(ods::arith::constant(context, index, at, location).into())?;
        put(ods::memref::dim(context, index, source, at, location).into())
    };
    // The dynamic sizes of the result: an all-reduce's are its input's; an
    // all-gather matmul's are (world size x rows of a) and b's columns.
    let mut sizes = Vec::new();
    for at in 0..result_type.rank() {
        if !matches!(result_type.dim_size(at), Ok(DimSize::Dynamic)) {
            continue;
        }
        let size = match (gathers, at) {
            (false, _) => dim(input, at),
            (true, 0) => (|| {
                let world = put(symm_mem::world_size(context, index, group, location).into())?;
                let rows = dim(input, 0)?;
                put(ods::arith::muli(context, world, rows, location).into())
            })(),
            (true, _) => op.operand(1).ok().and_then(|b| dim(b, 1)),
        };
        let Some(size) = size else {
            return false;
        };
        sizes.push(size);
    }
    let mut alloc: melior::ir::Operation = ods::memref::AllocOperation::builder(context, location)
        .memref(result_type.into())
        .dynamic_sizes(&sizes)
        .symbol_operands(&[])
        .build()
        .into();
    let segments = [sizes.len() as i32, 0];
    alloc.set_attribute(
        "operandSegmentSizes",
        DenseI32ArrayAttribute::new(context, &segments).into(),
    );
    let Some(out) = put(alloc) else {
        return false;
    };
    let mut built: melior::ir::Operation = if gathers {
        let Ok(b) = op.operand(1) else {
            return false;
        };
        symm_mem::all_gather_matmul_out(context, input, b, out, group, location).into()
    } else {
        let Ok(reduction) = op.attribute("reduction") else {
            return false;
        };
        symm_mem::all_reduce_out(context, input, out, reduction, group, location).into()
    };
    if let Ok(algorithm) = op.attribute("algorithm") {
        built.set_attribute("algorithm", algorithm);
    }
    rewriter.insert(built);
    rewriter.replace_op_with_values(op, &[out]);
    true
}
