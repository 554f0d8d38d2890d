//! Dialect handles and registries.

use crate::ffi;
use melior::{
    Context,
    dialect::{DialectHandle, DialectRegistry},
};

/// The handle of the `symm_mem` dialect.
pub fn symm_mem_handle() -> DialectHandle {
    // SAFETY: the handle is a static description of the dialect.
    unsafe { DialectHandle::from_raw(ffi::mlirGetDialectHandle__symm_mem__()) }
}

/// Registers the symm dialects and the upstream dialects and interface
/// models that symm's pipelines use (the same set as `symm-opt`).
pub fn register_dialects(registry: &DialectRegistry) {
    // SAFETY: the registry is live for the call.
    unsafe { ffi::symmRegisterDialects(registry.to_raw()) }
}

/// A context with every dialect of [`register_dialects`] loaded, ready to
/// parse symm programs.
pub fn create_context() -> Context {
    let registry = DialectRegistry::new();
    register_dialects(&registry);
    let context = Context::new();
    context.append_dialect_registry(&registry);
    context.load_all_available_dialects();
    context
}
