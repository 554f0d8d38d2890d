//! A `linalg.batch_matmul`, or a `linalg.matmul` that is not a plain
//! row-major one (an input read transposed, or an operand that is a
//! strided view), becomes one `symm_rt_batch_matmul` (cuBLAS's strided
//! batched GEMM; a 2-D matmul is a batch of one). Each operand's address,
//! row stride and batch stride come from its type (static strides, or an
//! identity layout's, read from its sizes), so views need no copy: the
//! slices of K of a split-K GEMM (`collectives::prologue`), the halves of a
//! merged gate_up weight. An input read transposed (b as n x k, the layout
//! of nn.Linear's weight; a as k x m) is passed as stored, with the layout
//! code saying so. The inputs share an element type; the output has it or
//! is f32.

use crate::PassError;
use crate::analysis::linalg::{OVERWRITES_ATTR, matmul_layout};
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
use symm_protocol::abi::{self, LayoutCode};

/// An operand as cuBLAS takes it: address (of its first element), row
/// stride and batch stride in elements (i64 values; 0 for a 2-D matmul's),
/// dtype code.
struct Operand<'c, 'a> {
    ptr: Value<'c, 'a>,
    row_stride: Value<'c, 'a>,
    batch_stride: Value<'c, 'a>,
    code: i64,
}

fn operand<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    value: Value<'c, '_>,
    rank: usize,
    role: &str,
) -> Result<Operand<'c, 'a>, PassError> {
    let Some(ty) = value.memref_type().filter(|ty| ty.rank() == rank) else {
        return Err(format!(
            "needs {rank}-D operands; its {role} is {}",
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
    if offset.is_none() {
        return Err(format!("has a {role} at a dynamic offset: {}", type_text(ty)).into());
    }
    if strides[rank - 1] != Some(1) {
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
                for after in dim + 1..rank {
                    let size = host.extent_i64(value, after);
                    product = host.arith(IntOp::Mul, product, size);
                }
                Ok(product)
            }
            None => Err(format!("has a {role} with dynamic strides: {}", type_text(ty)).into()),
        }
    };
    let row_stride = stride(host, rank - 2)?;
    let batch_stride = if rank == 3 {
        stride(host, 0)?
    } else {
        host.int(64, 0)
    };
    // The first element's address (the offset is static).
    let ptr = host.strided_ptr_of(value)?;
    Ok(Operand {
        ptr,
        row_stride,
        batch_stride,
        code: dtype as i64,
    })
}

/// A `linalg.batch_matmul` whose indexing maps are not a matmul's (a
/// broadcast, a transposed output) is not cuBLAS's: it stays for the
/// upstream GPU lowering (parallel loops), which ran every batched matmul
/// before this one existed.
pub fn left_to_loops(op: OperationRef) -> bool {
    op.isa(OpKind::LinalgBatchMatmul) && matmul_layout(op).is_none()
}

/// Which stored dimension of each operand holds the matmul's sizes: a's
/// (m, k), b's (k, n), c's (m, n), after the batch dimension if any.
struct Dims {
    a: (usize, usize),
    b: (usize, usize),
    c: (usize, usize),
}

impl Dims {
    fn of(layout: LayoutCode, batched: bool) -> Self {
        let lead = usize::from(batched);
        let (rows, columns) = (lead, lead + 1);
        let pick = |transposed: bool| {
            if transposed {
                (columns, rows)
            } else {
                (rows, columns)
            }
        };
        Self {
            a: pick(layout.a_transposed()),
            b: pick(layout.b_transposed()),
            c: (rows, columns),
        }
    }
}

/// The layout of `op` (a bufferized `linalg.matmul` or
/// `linalg.batch_matmul`) as cuBLAS runs it, or why it cannot.
pub(super) fn cublas_layout(op: OperationRef) -> Result<LayoutCode, PassError> {
    if op.operand_count() != 3 || op.result_count() != 0 {
        return Err("must work on memrefs (bufferize first)".into());
    }
    matmul_layout(op).ok_or_else(|| {
        "has indexing maps that are not a matmul's with each input as written or transposed \
         (a broadcast, or a transposed output), which cuBLAS does not run"
            .into()
    })
}

pub fn lower<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    let layout = cublas_layout(op)?;
    let batched = op.isa(OpKind::LinalgBatchMatmul);
    let rank = if batched { 3 } else { 2 };
    let operands: Vec<Value<'c, 'a>> = op.operands().collect();
    let (a, b, c) = (operands[0], operands[1], operands[2]);
    let at = Dims::of(layout, batched);
    // Sizes that are static on both sides must agree: m, k and n, and
    // the batch.
    let shape = |v: Value| v.memref_type().map(dims).unwrap_or_default();
    let dim = |v: Value, d: usize| shape(v).get(d).copied();
    let mut pairs = vec![
        (dim(a, at.a.0), dim(c, at.c.0)),
        (dim(a, at.a.1), dim(b, at.b.0)),
        (dim(b, at.b.1), dim(c, at.c.1)),
    ];
    if batched {
        pairs.extend([(dim(a, 0), dim(c, 0)), (dim(b, 0), dim(c, 0))]);
    }
    if pairs
        .iter()
        .any(|(x, y)| matches!((x, y), (Some(Some(x)), Some(Some(y))) if x != y))
    {
        return Err(format!(
            "has shapes {} @ {} into {} ({}), which do not match",
            type_text(a.r#type()),
            type_text(b.r#type()),
            type_text(c.r#type()),
            layout.text()
        )
        .into());
    }
    let a_operand = operand(host, a, rank, "left-hand side")?;
    let b_operand = operand(host, b, rank, "right-hand side")?;
    let c_operand = operand(host, c, rank, "output")?;
    if a_operand.code != b_operand.code {
        return Err("mixes input element types; cuBLAS takes one".into());
    }
    let f32_code = abi::DtypeCode::F32 as i64;
    if c_operand.code != a_operand.code && c_operand.code != f32_code {
        return Err("has an output of another element type than its inputs' or f32".into());
    }
    let batch = if batched {
        host.extent_i64(c, 0)
    } else {
        host.int(64, 1)
    };
    let m = host.extent_i64(a, at.a.0);
    let k = host.extent_i64(a, at.a.1);
    let n = host.extent_i64(b, at.b.1);
    let accumulate = host.int(32, i64::from(op.attribute(OVERWRITES_ATTR).is_err()));
    let in_code = host.int(32, a_operand.code);
    let out_code = host.int(32, c_operand.code);
    let layout = host.int(32, layout as i64);
    let mut args = vec![a_operand.ptr, b_operand.ptr, c_operand.ptr, batch, m, n, k];
    for operand in [&a_operand, &b_operand, &c_operand] {
        args.push(operand.row_stride);
        args.push(operand.batch_stride);
    }
    args.extend([in_code, out_code, accumulate, layout]);
    host.call(&abi::BATCH_MATMUL, &args);
    Ok(())
}
