//! `linalg.batch_matmul` on strided memrefs becomes one
//! `symm_rt_batch_matmul` (cuBLAS's strided batched GEMM): each operand's
//! address, row stride and batch stride come from its type (static
//! strides, or an identity layout's, read from its sizes), so views that
//! slice K out of a matrix (a split-K GEMM's slices, `collectives::prologue`)
//! need no copy. The inputs share an element type; the output has it or is
//! f32.

use crate::PassError;
use crate::analysis::linalg::{OVERWRITES_ATTR, default_maps};
use crate::ir::builders::IntOp;
use crate::ir::host::Host;
use crate::ir::melior_ext::{
    OperationExt, ValueExt, has_identity_layout, strides_and_offset, type_text,
};
use crate::ir::op_kind::OpKind;
use crate::ir::scalar::Scalar;
use crate::ir::typed_builder::dims;
use melior::ir::{
    OperationRef, Value, ValueLike, operation::OperationLike, r#type::ShapedTypeLike,
};
use symm_protocol::abi;

/// A rank-3 operand as cuBLAS takes it: address (of its first element),
/// row stride and batch stride in elements (i64 values), dtype code.
struct Operand<'c, 'a> {
    ptr: Value<'c, 'a>,
    row_stride: Value<'c, 'a>,
    batch_stride: Value<'c, 'a>,
    code: i64,
}

fn operand<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    value: Value<'c, '_>,
    role: &str,
) -> Result<Operand<'c, 'a>, PassError> {
    let Some(ty) = value.memref_type().filter(|ty| ty.rank() == 3) else {
        return Err(format!(
            "needs 3-D operands; its {role} is {}",
            type_text(value.r#type())
        )
        .into());
    };
    let element = ty.element();
    let dtype = Scalar::of_type(element)
        .and_then(Scalar::dtype)
        .ok_or_else(|| {
            format!(
                "has {role} of element type {}; f32, f16 and bf16 are supported",
                type_text(element)
            )
        })?;
    let Some((strides, offset)) = strides_and_offset(ty) else {
        return Err(format!("has a {role} without a strided layout: {}", type_text(ty)).into());
    };
    let Some(offset) = offset else {
        return Err(format!("has a {role} at a dynamic offset: {}", type_text(ty)).into());
    };
    if strides[2] != Some(1) {
        return Err(format!(
            "has a {role} whose rows are not contiguous ({}); cuBLAS reads unit-stride rows",
            type_text(ty)
        )
        .into());
    }
    // Static strides, or an identity layout's (the product of the sizes
    // after the dimension).
    let identity = has_identity_layout(ty.into());
    let stride = |host: &mut Host<'c, 'a, '_>, dim: usize| -> Result<Value<'c, 'a>, PassError> {
        match strides[dim] {
            Some(stride) => Ok(host.int(64, stride)),
            None if identity => {
                let mut product = host.int(64, 1);
                for after in dim + 1..3 {
                    let size = host.extent_i64(value, after);
                    product = host.arith(IntOp::Mul, product, size);
                }
                Ok(product)
            }
            None => Err(format!("has a {role} with dynamic strides: {}", type_text(ty)).into()),
        }
    };
    let row_stride = stride(host, 1)?;
    let batch_stride = stride(host, 0)?;
    let base = host.address_of(value);
    let shift = offset
        .checked_mul(dtype.bytes() as i64)
        .ok_or_else(|| format!("has a {role} at an offset of more bytes than 64 bits count"))?;
    let shift = host.int(64, shift);
    let address = host.arith(IntOp::Add, base, shift);
    let ptr = host.int_to_ptr(address);
    Ok(Operand {
        ptr,
        row_stride,
        batch_stride,
        code: dtype as i64,
    })
}

/// A `linalg.batch_matmul` with transposed or broadcast indexing maps is
/// not cuBLAS's: it stays for the upstream GPU lowering (parallel loops),
/// which ran every batched matmul before this one existed.
pub fn left_to_loops(op: OperationRef) -> bool {
    op.isa(OpKind::LinalgBatchMatmul) && !default_maps(op)
}

pub fn lower<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    if op.operand_count() != 3 || op.result_count() != 0 {
        return Err("must work on memrefs (bufferize first)".into());
    }
    let operands: Vec<Value<'c, 'a>> = op.operands().collect();
    let (a, b, c) = (operands[0], operands[1], operands[2]);
    // Sizes that are static on both sides must agree: (batch, m, k) @
    // (batch, k, n) into (batch, m, n).
    let shape = |v: Value| v.memref_type().map(dims).unwrap_or_default();
    let dim = |v: Value, d: usize| shape(v).get(d).copied();
    let pairs = [
        (dim(a, 0), dim(c, 0)),
        (dim(b, 0), dim(c, 0)),
        (dim(a, 1), dim(c, 1)),
        (dim(a, 2), dim(b, 1)),
        (dim(b, 2), dim(c, 2)),
    ];
    if pairs
        .iter()
        .any(|(x, y)| matches!((x, y), (Some(Some(x)), Some(Some(y))) if x != y))
    {
        return Err(format!(
            "has shapes {} @ {} into {}, which do not match",
            type_text(a.r#type()),
            type_text(b.r#type()),
            type_text(c.r#type())
        )
        .into());
    }
    let a_operand = operand(host, a, "left-hand side")?;
    let b_operand = operand(host, b, "right-hand side")?;
    let c_operand = operand(host, c, "output")?;
    if a_operand.code != b_operand.code {
        return Err("mixes input element types; cuBLAS takes one".into());
    }
    let f32_code = abi::DtypeCode::F32 as i64;
    if c_operand.code != a_operand.code && c_operand.code != f32_code {
        return Err("has an output of another element type than its inputs' or f32".into());
    }
    let batch = host.extent_i64(c, 0);
    let m = host.extent_i64(a, 1);
    let k = host.extent_i64(a, 2);
    let n = host.extent_i64(b, 2);
    let accumulate = host.int(32, i64::from(op.attribute(OVERWRITES_ATTR).is_err()));
    let in_code = host.int(32, a_operand.code);
    let out_code = host.int(32, c_operand.code);
    let mut args = vec![a_operand.ptr, b_operand.ptr, c_operand.ptr, batch, m, n, k];
    for operand in [&a_operand, &b_operand, &c_operand] {
        args.push(operand.row_stride);
        args.push(operand.batch_stride);
    }
    args.extend([in_code, out_code, accumulate]);
    host.call(&abi::BATCH_MATMUL, &args);
    Ok(())
}
