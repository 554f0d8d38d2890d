//! Declarations of `include/symm-c/*.h`.

use mlir_sys::{
    MlirAttribute, MlirContext, MlirDialectHandle, MlirDialectRegistry, MlirLocation,
    MlirOperation, MlirPass, MlirStringRef, MlirType,
};
use std::ffi::c_char;

pub type SymmPassFactory = unsafe extern "C" fn() -> MlirPass;

unsafe extern "C" {
    pub fn mlirGetDialectHandle__symm_mem__() -> MlirDialectHandle;

    pub fn symmMemAttributeIsAAllocator(attr: MlirAttribute) -> bool;
    pub fn symmMemAllocatorAttrGet(
        ctx: MlirContext,
        kind: i32,
        group: MlirStringRef,
    ) -> MlirAttribute;
    pub fn symmMemAllocatorAttrGetKind(attr: MlirAttribute) -> i32;
    pub fn symmMemAllocatorAttrGetGroup(attr: MlirAttribute) -> MlirStringRef;
    pub fn symmMemTypeGetAllocator(ty: MlirType) -> MlirAttribute;
    pub fn symmMemGetSymmetricOperands(
        op: MlirOperation,
        indices: *mut isize,
        capacity: isize,
    ) -> isize;
    pub fn symmMemGetCommGroup(op: MlirOperation) -> MlirStringRef;
    pub fn symmMemOperationIsViewLike(op: MlirOperation) -> bool;
    pub fn symmMemEmitRemark(loc: MlirLocation, message: MlirStringRef);
    pub fn symmMemEmitWarning(loc: MlirLocation, message: MlirStringRef);

    pub fn symmRegisterPass(factory: SymmPassFactory);
    pub fn symmRegisterDialects(registry: MlirDialectRegistry);
    pub fn symmOptMain(argc: i32, argv: *mut *mut c_char) -> i32;
}
