//! Registers the Rust passes with MLIR's global pass registry, by name.

use crate::{PassDescriptor, cudagraph, plan, realize, select_all_reduce, to_dps, verify_groups};
use std::{ffi::CStr, sync::Once};
use symm_dialects::ffi;

/// Every pass of this crate.
pub static PASSES: &[&PassDescriptor] = &[
    &verify_groups::DESCRIPTOR,
    &to_dps::DESCRIPTOR,
    &realize::DESCRIPTOR,
    &plan::DESCRIPTOR,
    &select_all_reduce::DESCRIPTOR,
    &cudagraph::partition::DESCRIPTOR,
    &cudagraph::hoist_allocs::DESCRIPTOR,
];

/// Named pipelines: (argument, description, pipeline on builtin.module).
pub static PIPELINES: &[(&CStr, &CStr, &CStr)] = &[(
    c"symm-mem-middle-end",
    c"Collectives into out form, symmetric operands realized, buffers planned into pools",
    c"func.func(symm-mem-to-dps),symm-mem-realize,symm-mem-plan",
)];

/// Registers every symm pass under its argument (`symm-mem-verify-groups`,
/// ...) and every named pipeline, once per process.
pub fn register_passes() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for pass in PASSES {
            // SAFETY: descriptors are 'static.
            unsafe { ffi::symmRegisterPass(pass.raw()) };
        }
        for (argument, description, pipeline) in PIPELINES {
            // SAFETY: 'static C strings. The pipeline text is ours and
            // covered by tests, so a parse failure is a bug worth a panic.
            let ok = unsafe {
                ffi::symmRegisterPipeline(
                    argument.as_ptr(),
                    description.as_ptr(),
                    pipeline.as_ptr(),
                )
            };
            assert!(ok, "built-in pipeline {argument:?} does not parse");
        }
    });
}
