//! Registers the Rust passes with MLIR's global pass registry, by name.

use crate::verify_groups;
use melior::{ir::r#type::TypeId, pass::create_external};
use mlir_sys::MlirPass;
use std::sync::Once;
use symm_dialects::{ffi, symm_mem_handle};

/// Pass type ids must have a stable address for the life of the process.
#[repr(align(8))]
struct PassId;

static VERIFY_GROUPS_ID: PassId = PassId;

extern "C" fn create_verify_groups() -> MlirPass {
    create_external(
        verify_groups::VerifyGroups,
        TypeId::create(&VERIFY_GROUPS_ID),
        "SymmMemVerifyGroups",
        verify_groups::ARGUMENT,
        verify_groups::DESCRIPTION,
        "func.func",
        &[symm_mem_handle()],
    )
    .to_raw()
}

/// Registers every symm pass under its argument (`symm-mem-verify-groups`,
/// ...), once per process.
pub fn register_passes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: the factory returns a fresh pass each call and never fails.
        unsafe { ffi::symmRegisterPass(create_verify_groups) };
    });
}
