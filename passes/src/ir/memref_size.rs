//! Byte sizes of memref types.

use melior::ir::{Type, TypeLike, r#type::MemRefType};
use mlir_sys::{
    mlirFloatTypeGetWidth, mlirIntegerTypeGetWidth, mlirShapedTypeGetDimSize,
    mlirShapedTypeGetRank, mlirShapedTypeHasStaticShape, mlirTypeIsAFloat, mlirTypeIsAIndex,
    mlirTypeIsAInteger,
};

/// Bits of one element, for the scalar types a buffer can hold.
pub(crate) fn element_bits(element: Type) -> Option<u64> {
    let raw = element.to_raw();
    // SAFETY: type queries on a live type.
    unsafe {
        if mlirTypeIsAFloat(raw) {
            Some(u64::from(mlirFloatTypeGetWidth(raw)))
        } else if mlirTypeIsAInteger(raw) {
            Some(u64::from(mlirIntegerTypeGetWidth(raw)))
        } else if mlirTypeIsAIndex(raw) {
            Some(64)
        } else {
            None
        }
    }
}

/// Bytes a memref of this type occupies, or `None` for dynamic shapes and
/// element types without a fixed width. Sub-byte elements round up.
pub fn memref_byte_size(ty: MemRefType) -> Option<u64> {
    let raw = ty.to_raw();
    // SAFETY: shape queries on a live shaped type.
    let elements = unsafe {
        if !mlirShapedTypeHasStaticShape(raw) {
            return None;
        }
        let rank = mlirShapedTypeGetRank(raw);
        (0..rank as isize).try_fold(1u64, |acc, dim| {
            acc.checked_mul(u64::try_from(mlirShapedTypeGetDimSize(raw, dim)).ok()?)
        })?
    };
    let element = super::melior_ext::shaped_element(ty.into());
    let bits = elements.checked_mul(element_bits(element)?)?;
    Some(bits.div_ceil(8))
}
