//! Declarations of `include/symm-c/*.h`.

use mlir_sys::{
    MlirAttribute, MlirContext, MlirDialectHandle, MlirDialectRegistry, MlirLocation,
    MlirOperation, MlirPass, MlirStringRef, MlirType,
};
use std::ffi::c_char;

/// `SymmPassOptionKind`.
pub type SymmPassOptionKind = u32;
pub const SYMM_PASS_OPTION_INT64: SymmPassOptionKind = 0;
pub const SYMM_PASS_OPTION_BOOL: SymmPassOptionKind = 1;
pub const SYMM_PASS_OPTION_STRING: SymmPassOptionKind = 2;

#[repr(C)]
pub struct SymmPassOption {
    pub name: *const c_char,
    pub description: *const c_char,
    pub kind: SymmPassOptionKind,
    pub default_value: *const c_char,
}

pub type SymmPassRun = unsafe extern "C" fn(op: MlirOperation, options: MlirStringRef) -> bool;

/// Whether an op must be converted (symm-c/Conversion.h).
pub type SymmConversionIllegal =
    unsafe extern "C" fn(op: MlirOperation, user: *mut std::ffi::c_void) -> bool;
/// One conversion in progress (symm-c/Conversion.h).
#[repr(C)]
pub struct SymmConversion {
    _private: [u8; 0],
}
/// Rewrites an illegal op, erasing through the conversion; false when it
/// refuses it.
pub type SymmConversionLower = unsafe extern "C" fn(
    op: MlirOperation,
    conversion: *mut SymmConversion,
    user: *mut std::ffi::c_void,
) -> bool;

#[repr(C)]
pub struct SymmPassInfo {
    pub argument: *const c_char,
    pub name: *const c_char,
    pub description: *const c_char,
    pub op_name: *const c_char,
    pub options: *const SymmPassOption,
    pub num_options: isize,
    pub run: SymmPassRun,
}

unsafe extern "C" {
    pub fn mlirGetDialectHandle__symm_mem__() -> MlirDialectHandle;
    pub fn mlirGetDialectHandle__cudagraph__() -> MlirDialectHandle;

    pub fn symmMemAttributeIsAAllocator(attr: MlirAttribute) -> bool;
    /// `enum SymmOpKind` (symm-c/OpKind.h) of an operation.
    pub fn symmOperationKind(op: MlirOperation) -> i32;
    /// `enum SymmOpDialect` (symm-c/OpKind.h) of an operation.
    pub fn symmOperationDialect(op: MlirOperation) -> i32;
    /// Whether an operation is a loop (`LoopLikeOpInterface`).
    pub fn symmOperationIsLoop(op: MlirOperation) -> bool;
    /// MLIR's partial dialect conversion with the caller's legality and
    /// rewrite (symm-c/Conversion.h).
    pub fn symmApplyPartialConversion(
        root: MlirOperation,
        illegal: SymmConversionIllegal,
        lower: SymmConversionLower,
        user: *mut std::ffi::c_void,
    ) -> mlir_sys::MlirLogicalResult;
    /// Tells the conversion's driver that the running rewrite updated its
    /// root in place (symm-c/Conversion.h).
    pub fn symmConversionUpdatedInPlace(conversion: *mut SymmConversion, op: MlirOperation);
    /// Erases an op for a conversion: out of the IR now, destroyed when the
    /// conversion ends (symm-c/Conversion.h).
    pub fn symmConversionEraseOp(conversion: *mut SymmConversion, op: MlirOperation) -> bool;
    /// Whether an op may write the memref `value` (symm-c/Effects.h).
    pub fn symmValueMayBeWritten(value: mlir_sys::MlirValue) -> bool;
    /// Whether an op touches no memory and holds no regions (symm-c/Effects.h).
    pub fn symmOpIsEffectFreeValue(op: MlirOperation) -> bool;
    /// Whether an op is `nvvm.prefetch` to L2 (symm-c/Effects.h).
    pub fn symmOpIsL2Prefetch(op: MlirOperation) -> bool;
    /// Whether an op is `nvvm.griddepcontrol wait` (symm-c/Effects.h).
    pub fn symmOpIsGridDependencyWait(op: MlirOperation) -> bool;
    pub fn cudaGraphAttributeIsAHostMemory(attr: MlirAttribute) -> bool;
    pub fn symmMemAllocatorAttrGet(
        ctx: MlirContext,
        kind: i32,
        group: MlirStringRef,
    ) -> MlirAttribute;
    pub fn symmMemAllocatorAttrGetKind(attr: MlirAttribute) -> i32;
    pub fn symmMemAllocatorAttrGetGroup(attr: MlirAttribute) -> MlirStringRef;
    pub fn symmMemTypeGetAllocator(ty: MlirType) -> MlirAttribute;
    pub fn symmMemPoolTypeGet(ctx: MlirContext) -> MlirType;
    /// `#nvvm.shape<m, n, k>` (symm-c/Nvvm.h).
    pub fn symmNvvmMmaShapeGet(ctx: MlirContext, m: i32, n: i32, k: i32) -> MlirAttribute;
    /// `#nvvm.mma_layout<row>` or `<col>`.
    pub fn symmNvvmMmaLayoutGet(ctx: MlirContext, column: bool) -> MlirAttribute;
    /// `#nvvm.mma_type<bf16>`.
    pub fn symmNvvmMmaTypeBf16Get(ctx: MlirContext) -> MlirAttribute;
    /// `#nvvm.ld_st_matrix_shape<m = 8, n = 8>`.
    pub fn symmNvvmLdMatrixShape8x8Get(ctx: MlirContext) -> MlirAttribute;
    /// 0 parallel, 1 reduction, -1 no linalg iterator type (symm-c/Linalg.h).
    pub fn symmLinalgIteratorKind(attr: MlirAttribute) -> i32;
    /// `#gpu<dim AXIS>` (0: x, 1: y, 2: z), or a null attribute.
    pub fn symmGpuDimensionAttrGet(ctx: MlirContext, axis: i32) -> MlirAttribute;
    /// `#gpu<all_reduce_op NAME>`, or a null attribute (symm-c/Gpu.h).
    pub fn symmGpuAllReduceOperationAttrGet(ctx: MlirContext, name: MlirStringRef)
    -> MlirAttribute;
    /// `#gpu<shuffle_mode xor>` (symm-c/Gpu.h).
    pub fn symmGpuShuffleXorAttrGet(ctx: MlirContext) -> MlirAttribute;
    /// `#nvvm.load_cache_modifier<cg>`.
    pub fn symmNvvmCacheGlobalGet(ctx: MlirContext) -> MlirAttribute;
    /// `#nvvm.prefetch_cache_level<L2>`.
    pub fn symmNvvmPrefetchL2Get(ctx: MlirContext) -> MlirAttribute;
    /// `#nvvm.grid_dep_action<wait>`, or `<launch_dependents>`.
    pub fn symmNvvmGridDepActionGet(ctx: MlirContext, launch_dependents: bool) -> MlirAttribute;
    /// `#nvvm.ld_st_matrix_elt_type<b16>`.
    pub fn symmNvvmLdMatrixB16Get(ctx: MlirContext) -> MlirAttribute;
    /// `#nvvm.wgmma_type<f32>` or `<bf16>`.
    pub fn symmNvvmWgmmaTypeGet(ctx: MlirContext, f32: bool) -> MlirAttribute;
    /// `#nvvm.wgmma_scale_out<one>`.
    pub fn symmNvvmWgmmaScaleOutOneGet(ctx: MlirContext) -> MlirAttribute;
    /// `#nvvm.wgmma_scale_in<one>`.
    pub fn symmNvvmWgmmaScaleInOneGet(ctx: MlirContext) -> MlirAttribute;
    /// Drops the allocator memory space from every memref type in `op` and
    /// below, by a dialect conversion; false if it failed.
    pub fn symmMemStripAllocatorMemorySpaces(op: MlirOperation) -> bool;
    pub fn symmMemTypeIsAPool(ty: MlirType) -> bool;
    pub fn symmMemGetSymmetricOperands(
        op: MlirOperation,
        indices: *mut isize,
        capacity: isize,
    ) -> isize;
    pub fn symmMemGetCommGroup(op: MlirOperation) -> MlirStringRef;
    pub fn symmMemOperationIsViewLike(op: MlirOperation) -> bool;
    pub fn symmMemEmitRemark(loc: MlirLocation, message: MlirStringRef);
    pub fn symmMemEmitWarning(loc: MlirLocation, message: MlirStringRef);

    pub fn symmRegisterPass(info: *const SymmPassInfo);
    pub fn symmCreatePass(info: *const SymmPassInfo) -> MlirPass;
    pub fn symmConfigureKernelMath() -> bool;
    pub fn symmRegisterPipeline(
        argument: *const c_char,
        description: *const c_char,
        pipeline: *const c_char,
    ) -> bool;
    pub fn symmRegisterDialects(registry: MlirDialectRegistry);
    pub fn symmOptMain(argc: i32, argv: *mut *mut c_char) -> i32;

    /// See dialects/include/symm-c/Recovery.h.
    pub fn symmEnableRecovery(max_bytes: u64);
    pub fn symmParseFileRecovering(
        context: mlir_sys::MlirContext,
        path: mlir_sys::MlirStringRef,
        module: *mut mlir_sys::MlirModule,
        crash_line: *mut i32,
    ) -> i32;
    pub fn symmParseSourceRecovering(
        context: mlir_sys::MlirContext,
        source: mlir_sys::MlirStringRef,
        name: mlir_sys::MlirStringRef,
        module: *mut mlir_sys::MlirModule,
        crash_line: *mut i32,
    ) -> i32;
    pub fn symmRunPassManagerRecovering(
        pass_manager: mlir_sys::MlirPassManager,
        op: mlir_sys::MlirOperation,
    ) -> i32;
    pub fn symmLastCrash() -> mlir_sys::MlirStringRef;
    pub fn symmCrashLine(like: MlirContext, text: mlir_sys::MlirStringRef) -> i32;
    pub fn symmRunRecovering(
        work: unsafe extern "C" fn(*mut std::ffi::c_void),
        data: *mut std::ffi::c_void,
    ) -> i32;

    pub fn symmEmitLLVM(
        module: MlirOperation,
        llvm_ir_path: *const c_char,
        object_path: *const c_char,
        on_error: mlir_sys::MlirStringCallback,
        user_data: *mut std::ffi::c_void,
    ) -> bool;
}

/// `symmParseFileRecovering` and friends: the run succeeded.
pub const SYMM_RUN_OK: i32 = 0;
/// It failed with diagnostics.
pub const SYMM_RUN_FAILED: i32 = 1;
/// MLIR or LLVM crashed, aborted or ran out of memory (`symmLastCrash`).
pub const SYMM_RUN_CRASHED: i32 = 2;
/// Parsed, but the verifier refused it (its diagnostics were emitted).
pub const SYMM_RUN_INVALID: i32 = 3;
