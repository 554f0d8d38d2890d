//! `symm_mem.tensor_map` (a TMA descriptor for a generated kernel,
//! `symm-linalg-matmul-to-gpu`) becomes the runtime's
//! `symm_rt_tensor_map`, which answers the descriptor's device address or
//! 0 where it has none.

use crate::PassError;
use crate::ir::builders::IntOp;
use crate::ir::host::Host;
use crate::ir::melior_ext::{ValueExt, strides_and_offset};
use crate::ir::typed_builder::static_dim;
use crate::to_runtime::kernel_choice::attribute;
use melior::ir::{OperationRef, operation::OperationLike, r#type::ShapedTypeLike};
use symm_protocol::abi;

pub fn lower<'c, 'a>(
    host: &mut Host<'c, 'a, '_>,
    op: OperationRef<'c, 'a>,
) -> Result<(), PassError> {
    let source = op
        .operand(0)
        .map_err(|_| PassError::from("has no source"))?;
    let ty = source
        .memref_type()
        .ok_or("describes a value that is not a memref")?;
    let rank = ty.rank();
    let strides = strides_and_offset(ty)
        .map(|(strides, _)| strides)
        .unwrap_or_default();
    // The rows' stride, and whether a stack of matrices is one matrix of
    // all their rows (its slices follow each other). A stride the type
    // does not give reads as 0: the runtime then has no descriptor and the
    // kernel's caller takes another way.
    let row_stride = strides.get(rank.saturating_sub(2)).copied().flatten();
    let stacked = rank == 3
        && match (
            strides.first().copied().flatten(),
            row_stride,
            static_dim(ty, 1),
        ) {
            (Some(slice), Some(row), Some(rows)) => slice == row * rows,
            _ => false,
        };
    let rows = match rank {
        2 => host.extent_i64(source, 0),
        _ if stacked => {
            let (slices, rows) = (host.extent_i64(source, 0), host.extent_i64(source, 1));
            host.arith(IntOp::Mul, slices, rows)
        }
        _ => host.int(64, 0),
    };
    let args = [
        host.strided_ptr_of(source)?,
        rows,
        host.extent_i64(source, rank - 1),
        host.int(64, row_stride.unwrap_or(0)),
        attribute(host, op, "box_rows")?,
        attribute(host, op, "box_columns")?,
    ];
    let descriptor = host.call_value(&abi::TENSOR_MAP, &args);
    super::replace_result(op, descriptor)?;
    Ok(())
}
