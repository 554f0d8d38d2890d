//! Registers the Rust passes with MLIR's global pass registry, by name.

use crate::{PassDescriptor, plan, realize, to_dps, verify_groups};
use std::sync::Once;
use symm_dialects::ffi;

/// Every pass of this crate.
pub static PASSES: &[&PassDescriptor] = &[
    &verify_groups::DESCRIPTOR,
    &to_dps::DESCRIPTOR,
    &realize::DESCRIPTOR,
    &plan::DESCRIPTOR,
];

/// Registers every symm pass under its argument (`symm-mem-verify-groups`,
/// ...), once per process.
pub fn register_passes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for pass in PASSES {
            // SAFETY: descriptors are 'static.
            unsafe { ffi::symmRegisterPass(pass.raw()) };
        }
    });
}
