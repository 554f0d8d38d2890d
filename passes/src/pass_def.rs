//! How a Rust pass describes itself to MLIR: argument, options and body,
//! registered through the C++ `DescribedPass` so that passes take options
//! (`symm-mem-plan{alignment=256}`), which MLIR's external passes cannot.

use crate::ir::{Op, emit_error};
use mlir_sys::{MlirOperation, MlirStringRef};
use std::{
    collections::HashMap,
    ffi::CStr,
    panic::{AssertUnwindSafe, catch_unwind},
};
use symm_dialects::ffi;

/// The value type of an option, checked by MLIR's option parser.
#[derive(Clone, Copy, Debug)]
pub enum OptionKind {
    Int64,
    Bool,
    String,
}

/// One option of a pass.
#[repr(transparent)]
pub struct PassOption(ffi::SymmPassOption);

// SAFETY: the pointers inside are to 'static, immutable C strings.
unsafe impl Sync for PassOption {}

impl PassOption {
    pub const fn new(
        name: &'static CStr,
        description: &'static CStr,
        kind: OptionKind,
        default_value: &'static CStr,
    ) -> Self {
        Self(ffi::SymmPassOption {
            name: name.as_ptr(),
            description: description.as_ptr(),
            kind: match kind {
                OptionKind::Int64 => ffi::SYMM_PASS_OPTION_INT64,
                OptionKind::Bool => ffi::SYMM_PASS_OPTION_BOOL,
                OptionKind::String => ffi::SYMM_PASS_OPTION_STRING,
            },
            default_value: default_value.as_ptr(),
        })
    }
}

/// The values of a pass's options for one run, as MLIR parsed them.
#[derive(Clone, Debug, Default)]
pub struct PassOptions {
    values: HashMap<String, String>,
}

impl PassOptions {
    fn parse(text: &str) -> Self {
        let values = text
            .lines()
            .filter_map(|line| line.split_once('='))
            .map(|(name, value)| (name.to_owned(), value.to_owned()))
            .collect();
        Self { values }
    }

    /// An int64 option; MLIR has already checked that it parses.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.values.get(name)?.parse().ok()
    }

    pub fn flag(&self, name: &str) -> bool {
        self.values.get(name).is_some_and(|value| value == "true")
    }
}

/// The pass failed; its diagnostics have been emitted.
#[derive(Debug)]
pub struct PassFailed;

/// A pass body written in Rust.
pub trait SymmPass {
    fn run(op: Op, options: &PassOptions) -> Result<(), PassFailed>;
}

/// Everything MLIR needs to know about a pass; lives in a `static`.
#[repr(transparent)]
pub struct PassDescriptor(ffi::SymmPassInfo);

// SAFETY: only pointers to 'static data and a function pointer.
unsafe impl Sync for PassDescriptor {}

impl PassDescriptor {
    /// `op_name` is the anchor op (`c"func.func"`), or `c""` for any op.
    pub const fn new<P: SymmPass>(
        argument: &'static CStr,
        name: &'static CStr,
        description: &'static CStr,
        op_name: &'static CStr,
        options: &'static [PassOption],
    ) -> Self {
        Self(ffi::SymmPassInfo {
            argument: argument.as_ptr(),
            name: name.as_ptr(),
            description: description.as_ptr(),
            op_name: op_name.as_ptr(),
            // PassOption is repr(transparent) over SymmPassOption.
            options: options.as_ptr().cast(),
            num_options: options.len() as isize,
            run: run_pass::<P>,
        })
    }

    pub fn argument(&self) -> &'static str {
        // SAFETY: built from a 'static CStr in `new`.
        unsafe { CStr::from_ptr(self.0.argument) }
            .to_str()
            .unwrap_or("")
    }

    pub(crate) fn raw(&'static self) -> *const ffi::SymmPassInfo {
        &self.0
    }

    /// A new instance with default options, for a melior `PassManager`.
    pub fn create(&'static self) -> melior::pass::Pass {
        // SAFETY: the descriptor is 'static; the pass takes ownership.
        unsafe { melior::pass::Pass::from_raw(ffi::symmCreatePass(self.raw())) }
    }
}

unsafe extern "C" fn run_pass<P: SymmPass>(op: MlirOperation, options: MlirStringRef) -> bool {
    let op = Op::from_raw(op);
    // SAFETY: MLIR passes a valid string that outlives the call.
    let text = unsafe { std::slice::from_raw_parts(options.data.cast::<u8>(), options.length) };
    let options = PassOptions::parse(&String::from_utf8_lossy(text));
    // A panic must not unwind into C++; report it as a pass failure.
    match catch_unwind(AssertUnwindSafe(|| P::run(op, &options))) {
        Ok(Ok(())) => true,
        Ok(Err(PassFailed)) => false,
        Err(_) => {
            emit_error(
                op.loc(),
                "internal error: a symm pass panicked; please report it",
            );
            false
        }
    }
}
