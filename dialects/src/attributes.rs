//! Safe, typed wrappers over the C API's getters for the attributes and
//! types that upstream MLIR exposes to no C API of its own (gpu and nvvm
//! enum attributes, the pool type). The only place where the passes'
//! values of these kinds come from raw handles.

use crate::ffi;
use melior::{
    Context,
    ir::{Attribute, Type},
};
use mlir_sys::MlirStringRef;

/// An attribute the C API made in `context`.
fn adopt<'c>(_context: &'c Context, raw: mlir_sys::MlirAttribute) -> Attribute<'c> {
    // SAFETY: the C API returned a non-null attribute owned by `context`,
    // which outlives 'c.
    unsafe { Attribute::from_raw(raw) }
}

/// `!symm_mem.pool`.
pub fn pool_type(context: &Context) -> Type<'_> {
    // SAFETY: a type owned by `context`.
    unsafe { Type::from_raw(ffi::symmMemPoolTypeGet(context.to_raw())) }
}

/// `#gpu<dim x|y|z>` for axis 0, 1 or 2.
pub fn gpu_dimension(context: &Context, axis: i32) -> Attribute<'_> {
    // SAFETY: a live context; the getter takes any axis 0..=2.
    adopt(context, unsafe {
        ffi::symmGpuDimensionAttrGet(context.to_raw(), axis.clamp(0, 2))
    })
}

/// `#gpu<all_reduce_op NAME>` (`add`, `mul`, `minnumf`, ...); `None` for a
/// name the enum does not have.
pub fn gpu_all_reduce_operation<'c>(context: &'c Context, name: &str) -> Option<Attribute<'c>> {
    let name = MlirStringRef {
        data: name.as_ptr().cast(),
        length: name.len(),
    };
    // SAFETY: a live context and a string that outlives the call.
    let raw = unsafe { ffi::symmGpuAllReduceOperationAttrGet(context.to_raw(), name) };
    (!raw.ptr.is_null()).then(|| adopt(context, raw))
}

/// `#gpu<shuffle_mode xor>`.
pub fn gpu_shuffle_xor(context: &Context) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmGpuShuffleXorAttrGet(context.to_raw())
    })
}

/// `#nvvm.grid_dep_action<launch_dependents>` (true) or `<wait>`.
pub fn nvvm_grid_dep_action(context: &Context, launch_dependents: bool) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmGridDepActionGet(context.to_raw(), launch_dependents)
    })
}

/// `#nvvm.load_cache_modifier<cg>`.
pub fn nvvm_cache_global(context: &Context) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmCacheGlobalGet(context.to_raw())
    })
}

/// `#nvvm.prefetch_cache_level<L2>`.
pub fn nvvm_prefetch_l2(context: &Context) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmPrefetchL2Get(context.to_raw())
    })
}

/// `#nvvm.shape<m, n, k>`.
pub fn nvvm_mma_shape(context: &Context, m: i32, n: i32, k: i32) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmMmaShapeGet(context.to_raw(), m, n, k)
    })
}

/// `#nvvm.mma_layout<col>` (true) or `<row>`.
pub fn nvvm_mma_layout(context: &Context, column: bool) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmMmaLayoutGet(context.to_raw(), column)
    })
}

/// `#nvvm.mma_type<bf16>`.
pub fn nvvm_mma_type_bf16(context: &Context) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmMmaTypeBf16Get(context.to_raw())
    })
}

/// `#nvvm.ld_st_matrix_shape<m = 8, n = 8>`.
pub fn nvvm_ld_matrix_shape_8x8(context: &Context) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmLdMatrixShape8x8Get(context.to_raw())
    })
}

/// `#nvvm.ld_st_matrix_elt_type<b16>`.
pub fn nvvm_ld_matrix_b16(context: &Context) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmLdMatrixB16Get(context.to_raw())
    })
}

/// `#nvvm.wgmma_type<f32>` (true) or `<bf16>`.
pub fn nvvm_wgmma_type(context: &Context, f32: bool) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmWgmmaTypeGet(context.to_raw(), f32)
    })
}

/// `#nvvm.wgmma_scale_out<one>`: the product adds to the accumulators.
pub fn nvvm_wgmma_scale_out_one(context: &Context) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmWgmmaScaleOutOneGet(context.to_raw())
    })
}

/// `#nvvm.wgmma_scale_in<one>`: an operand taken as it is.
pub fn nvvm_wgmma_scale_in_one(context: &Context) -> Attribute<'_> {
    // SAFETY: a live context.
    adopt(context, unsafe {
        ffi::symmNvvmWgmmaScaleInOneGet(context.to_raw())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_attributes_print_as_mlir_writes_them() {
        let context = crate::create_context();
        assert_eq!(
            gpu_shuffle_xor(&context).to_string(),
            "#gpu<shuffle_mode xor>"
        );
        assert_eq!(
            gpu_all_reduce_operation(&context, "add").map(|a| a.to_string()),
            Some("#gpu<all_reduce_op add>".to_owned())
        );
        assert!(gpu_all_reduce_operation(&context, "no such op").is_none());
        assert_eq!(gpu_dimension(&context, 1).to_string(), "#gpu<dim y>");
        assert_eq!(pool_type(&context).to_string(), "!symm_mem.pool");
        assert!(
            nvvm_grid_dep_action(&context, true)
                .to_string()
                .contains("launch_dependents")
        );
        assert_eq!(
            nvvm_wgmma_type(&context, false).to_string(),
            "#nvvm.wgmma_type<bf16>"
        );
        assert_eq!(
            nvvm_wgmma_type(&context, true).to_string(),
            "#nvvm.wgmma_type<f32>"
        );
        assert_eq!(
            nvvm_wgmma_scale_out_one(&context).to_string(),
            "#nvvm.wgmma_scale_out<one>"
        );
        assert_eq!(
            nvvm_wgmma_scale_in_one(&context).to_string(),
            "#nvvm.wgmma_scale_in<one>"
        );
    }
}
