//! Dynamic token counts: an entry point may take memrefs whose leading
//! dimension is dynamic (`memref<?x4096xbf16>`), the number of tokens of
//! the call, when it declares the largest it takes:
//!
//! ```mlir
//! func.func @layer(%x: memref<?x4096xbf16>, ...) attributes {symm_mem.max_tokens = 2048 : i64}
//! ```
//!
//! Every dynamic size in such a function is at most that bound: pools are
//! planned for it (`symm-mem-plan`), the entry point takes the count as an
//! argument and refuses a larger one at run time, and kernels are chosen
//! per call by the actual size.

use crate::ir::melior_ext::{OperationExt, byte_size, element_bytes};
use crate::ir::op_kind::OpKind;
use crate::ir::typed_builder::static_dim;
use melior::ir::{
    OperationRef,
    r#type::{MemRefType, ShapedTypeLike},
};

/// The function attribute declaring the bound.
pub const MAX_TOKENS_ATTR: &str = "symm_mem.max_tokens";

/// `enclosing_function` on melior's typed API.
pub fn enclosing_function_op<'c, 'a>(op: OperationRef<'c, 'a>) -> Option<OperationRef<'c, 'a>> {
    use melior::ir::operation::OperationLike;
    std::iter::successors(Some(op), |o| o.parent_operation()).find(|o| o.isa(OpKind::Func))
}

/// `max_tokens` on melior's typed API.
pub fn declared_max_tokens(function: OperationRef) -> Option<u64> {
    let value = function.int_attribute(MAX_TOKENS_ATTR)?;
    u64::try_from(value).ok().filter(|v| *v > 0)
}

/// Elements of `shape` with each dynamic size taken as `bound`.
pub fn bounded_elements(shape: &[Option<i64>], bound: u64) -> Option<u64> {
    shape.iter().try_fold(1u64, |acc, dim| {
        let size = match dim {
            Some(size) => u64::try_from(*size).ok()?,
            None => bound,
        };
        acc.checked_mul(size)
    })
}

/// Bytes of a memref type with its dynamic sizes at `bound` (the static
/// size when it has none).
pub fn bounded_bytes(ty: MemRefType, bound: Option<u64>) -> Option<u64> {
    if let Some(bytes) = byte_size(ty.into()) {
        return Some(bytes);
    }
    let bound = bound?;
    let shape: Vec<Option<i64>> = (0..ty.rank()).map(|d| static_dim(ty, d)).collect();
    bounded_elements(&shape, bound)?.checked_mul(element_bytes(ty.element())?)
}

#[cfg(test)]
mod tests {
    use super::bounded_elements;

    #[test]
    fn dynamic_sizes_take_the_bound() {
        assert_eq!(
            bounded_elements(&[None, Some(4096)], 2048),
            Some(2048 * 4096)
        );
        assert_eq!(bounded_elements(&[Some(3), Some(5)], 7), Some(15));
        assert_eq!(bounded_elements(&[None, None], 4), Some(16));
        assert_eq!(bounded_elements(&[Some(-1)], 4), None);
        assert_eq!(bounded_elements(&[None, Some(i64::MAX)], u64::MAX), None);
    }
}
