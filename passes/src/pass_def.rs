//! How a Rust pass describes itself to MLIR: argument, options and body,
//! registered through the C++ `DescribedPass` so that passes take options
//! (`symm-mem-plan{alignment=256}`), which MLIR's external passes cannot.

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

    /// The options of `descriptor` at their defaults, as MLIR passes them
    /// when none is given.
    #[cfg(test)]
    pub(crate) fn defaults(descriptor: &PassDescriptor) -> Self {
        let text: String = descriptor
            .options()
            .into_iter()
            .map(|(name, _, _, default)| format!("{name}={default}\n"))
            .collect();
        Self::parse(&text)
    }

    /// These options with `name` set to `value`.
    #[cfg(test)]
    pub(crate) fn with(mut self, name: &str, value: &str) -> Self {
        self.values.insert(name.to_owned(), value.to_owned());
        self
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

/// A pass body written in Rust, on melior's typed API: it gets the context
/// and a reference to the op it runs on.
pub trait TypedPass {
    fn run_typed<'c>(
        context: &'c melior::Context,
        op: melior::ir::OperationRef<'c, '_>,
        options: &PassOptions,
    ) -> Result<(), PassFailed>;
}

/// Everything MLIR needs to know about a pass, and the source file that
/// defines it (whose `//!` header is its long description in
/// docs/passes.md); lives in a `static`.
pub struct PassDescriptor {
    info: ffi::SymmPassInfo,
    source: &'static str,
}

// SAFETY: only pointers to 'static data and a function pointer.
unsafe impl Sync for PassDescriptor {}

impl PassDescriptor {
    /// `op_name` is the anchor op (`c"func.func"`), or `c""` for any op.
    pub const fn new<P: TypedPass>(
        argument: &'static CStr,
        name: &'static CStr,
        description: &'static CStr,
        op_name: &'static CStr,
        options: &'static [PassOption],
        source: &'static str,
    ) -> Self {
        let info = ffi::SymmPassInfo {
            argument: argument.as_ptr(),
            name: name.as_ptr(),
            description: description.as_ptr(),
            op_name: op_name.as_ptr(),
            // PassOption is repr(transparent) over SymmPassOption.
            options: options.as_ptr().cast(),
            num_options: options.len() as isize,
            run: run_pass::<P>,
        };
        Self { info, source }
    }

    pub fn argument(&self) -> &'static str {
        text(self.info.argument)
    }

    pub(crate) fn raw(&'static self) -> *const ffi::SymmPassInfo {
        &self.info
    }

    /// The one-line description (`symm-opt --help` shows it).
    pub fn summary(&self) -> &'static str {
        text(self.info.description)
    }

    /// The op the pass runs on (`builtin.module`, `func.func`).
    pub fn anchor(&self) -> &'static str {
        text(self.info.op_name)
    }

    /// The file that defines the pass, from the workspace root.
    pub fn source(&self) -> &'static str {
        self.source
    }

    /// Its options: name, description, kind (`int64`, `bool`, `string`)
    /// and default.
    pub fn options(&self) -> Vec<(&'static str, &'static str, &'static str, &'static str)> {
        let count = usize::try_from(self.info.num_options).unwrap_or(0);
        if count == 0 || self.info.options.is_null() {
            return Vec::new();
        }
        // SAFETY: `new` stored a 'static slice of `count` options.
        let options = unsafe { std::slice::from_raw_parts(self.info.options, count) };
        options
            .iter()
            .map(|o| {
                let kind = match o.kind {
                    ffi::SYMM_PASS_OPTION_INT64 => "int64",
                    ffi::SYMM_PASS_OPTION_BOOL => "bool",
                    _ => "string",
                };
                (
                    text(o.name),
                    text(o.description),
                    kind,
                    text(o.default_value),
                )
            })
            .collect()
    }

    /// Option `name`: its description and default (`options`).
    pub fn option(&self, name: &str) -> Option<(&'static str, &'static str)> {
        self.options()
            .into_iter()
            .find(|option| option.0 == name)
            .map(|(_, description, _, default)| (description, default))
    }

    /// A new instance with default options, for a melior `PassManager`.
    pub fn create(&'static self) -> melior::pass::Pass {
        // SAFETY: the descriptor is 'static; the pass takes ownership.
        unsafe { melior::pass::Pass::from_raw(ffi::symmCreatePass(self.raw())) }
    }
}

/// A 'static C string of a descriptor as text.
fn text(pointer: *const std::ffi::c_char) -> &'static str {
    if pointer.is_null() {
        return "";
    }
    // SAFETY: descriptors hold pointers to 'static CStrs only.
    unsafe { CStr::from_ptr(pointer) }.to_str().unwrap_or("")
}

unsafe extern "C" fn run_pass<P: TypedPass>(op: MlirOperation, options: MlirStringRef) -> bool {
    use melior::ir::operation::OperationLike;
    // SAFETY: MLIR passes the live operation the pass runs on.
    let op = unsafe { crate::ir::melior_ext::operation_at(op) };
    // SAFETY: MLIR passes a valid string that outlives the call.
    let text = unsafe { std::slice::from_raw_parts(options.data.cast::<u8>(), options.length) };
    let options = PassOptions::parse(&String::from_utf8_lossy(text));
    // SAFETY: the context outlives the run.
    let run = || unsafe {
        crate::ir::melior_ext::with_context_of(op, |context| P::run_typed(context, op, &options))
    };
    // A panic must not unwind into C++; report it as a pass failure.
    match catch_unwind(AssertUnwindSafe(run)) {
        Ok(Ok(())) => true,
        Ok(Err(PassFailed)) => false,
        Err(_) => {
            symm_dialects::emit_error(
                op.location(),
                "internal error: a symm pass panicked; please report it",
            );
            false
        }
    }
}
