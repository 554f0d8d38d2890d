//! The runtime as a C library: `libsymm_runtime.a` and `libsymm_runtime.so`
//! (with its SONAME, build.rs). Every C-ABI function (`symm_*`, the
//! compiled code's `symm_rt_*`, the `mgpu*` wrappers) is defined in the
//! `symm-runtime` crate; this crate only links it into the two archives,
//! so that Rust apps, which use the rlib, never build them.

pub use runtime::*;
