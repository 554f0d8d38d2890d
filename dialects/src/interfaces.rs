//! Queries of the symm_mem op interfaces, which the C API cannot express.

use crate::ffi;
use melior::ir::OperationRef;

/// Indices of the operands that `op` needs in symmetric memory, or `None`
/// when `op` does not implement `SymmetricOperandOpInterface`.
pub fn symmetric_operands(op: OperationRef) -> Option<Vec<usize>> {
    let raw = op.to_raw();
    // SAFETY: a null buffer with zero capacity only asks for the count.
    let count = unsafe { ffi::symmMemGetSymmetricOperands(raw, std::ptr::null_mut(), 0) };
    let count = usize::try_from(count).ok()?;
    let mut indices = vec![0isize; count];
    // SAFETY: `indices` holds `count` elements.
    unsafe { ffi::symmMemGetSymmetricOperands(raw, indices.as_mut_ptr(), count as isize) };
    Some(indices.into_iter().map(|index| index as usize).collect())
}

/// The group of an op with symmetric operands.
pub fn comm_group(op: OperationRef) -> Option<String> {
    // SAFETY: returns a null string ref for ops without the interface.
    let raw = unsafe { ffi::symmMemGetCommGroup(op.to_raw()) };
    if raw.data.is_null() {
        return None;
    }
    Some(crate::diagnostics::string_ref_text(raw))
}

/// True for `#cudagraph.host`, the memory space of host buffers.
pub fn is_host_memory(attr: melior::ir::Attribute) -> bool {
    // SAFETY: an attribute kind test on a live attribute.
    unsafe { ffi::cudaGraphAttributeIsAHostMemory(melior::ir::AttributeLike::to_raw(&attr)) }
}

/// True for ops that only view an operand's memory (ViewLikeOpInterface).
pub fn is_view_like(op: OperationRef) -> bool {
    // SAFETY: reads the op's registered interfaces.
    unsafe { ffi::symmMemOperationIsViewLike(op.to_raw()) }
}
