//! Running MLIR on untrusted input (dialects/include/symm-c/Recovery.h):
//! crashes of MLIR's parser and passes become statuses, and the process's
//! address space is bounded so an input cannot make it allocate without
//! limit.

use crate::ffi;

/// The address-space bound: `$SYMM_MAX_MEMORY_GB` GiB, 16 by default.
pub fn memory_limit_bytes() -> u64 {
    let gib = std::env::var("SYMM_MAX_MEMORY_GB")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|v| *v > 0)
        .unwrap_or(16);
    gib.saturating_mul(1 << 30)
}

/// Installs the crash handlers and the memory bound; once per process,
/// before any MLIR work.
pub fn enable_recovery() {
    // SAFETY: installs handlers and a resource limit; no pointers.
    unsafe { ffi::symmEnableRecovery(memory_limit_bytes()) }
}

/// What parsing under crash recovery gave (`parse_source`).
pub struct Parsed {
    /// `ffi::SYMM_RUN_OK`, `_INVALID` (parsed, the verifier refused it),
    /// `_FAILED` (did not parse) or `_CRASHED` (MLIR's parser crashed).
    pub status: i32,
    /// The module when the status is `SYMM_RUN_OK` (else null), owned by
    /// the caller.
    pub module: mlir_sys::MlirModule,
    /// The input line the parser crashed on (`SYMM_RUN_CRASHED`), else 0.
    pub crash_line: i32,
}

/// Parses `text` (any bytes) as a module named `name` in its diagnostics'
/// locations, then verifies it, with crashes of MLIR recovered.
pub fn parse_source(context: mlir_sys::MlirContext, text: &[u8], name: &str) -> Parsed {
    let bytes = |b: &[u8]| mlir_sys::MlirStringRef {
        data: b.as_ptr().cast(),
        length: b.len(),
    };
    let mut parsed = Parsed {
        status: ffi::SYMM_RUN_FAILED,
        module: mlir_sys::MlirModule {
            ptr: std::ptr::null_mut(),
        },
        crash_line: 0,
    };
    // SAFETY: the caller's live context; the text and name outlive the
    // call; out-pointers to the fields of a local.
    parsed.status = unsafe {
        ffi::symmParseSourceRecovering(
            context,
            bytes(text),
            bytes(name.as_bytes()),
            &mut parsed.module,
            &mut parsed.crash_line,
        )
    };
    parsed
}

/// What the last recovered crash was.
pub fn last_crash() -> String {
    // SAFETY: a string owned by the C++ side, valid until the next crash.
    let text = unsafe { ffi::symmLastCrash() };
    if text.data.is_null() {
        return String::new();
    }
    // SAFETY: `length` bytes at `data`.
    let bytes = unsafe { std::slice::from_raw_parts(text.data.cast::<u8>(), text.length) };
    String::from_utf8_lossy(bytes).into_owned()
}

/// Ends the process at once with `status`, without destructors or the
/// threads' teardown: after a recovered crash (and after some parse errors
/// of MLIR 22's parser) MLIR's state and the heap are not to be trusted.
/// Flush what is buffered first; Rust's stderr is unbuffered.
pub fn exit_now(status: i32) -> ! {
    unsafe extern "C" {
        fn _exit(status: i32) -> !;
    }
    // SAFETY: ends the process; nothing runs after it.
    unsafe { _exit(status) }
}

/// Stack of the thread the tools run MLIR on: deeply nested input recurses
/// in MLIR's parser, verifier and passes (about 2 KiB a level; the main
/// thread's 8 MiB overflowed at about 4,000 nested regions).
pub const STACK_BYTES: usize = 1 << 30;

/// Runs `work` on a thread with a stack of `STACK_BYTES` (address space,
/// committed only as it is used) and returns what it returns, or why no
/// such thread could start. A panic in `work` is resumed on the caller's
/// thread.
pub fn on_large_stack<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, String> {
    let handle = std::thread::Builder::new()
        .name("symm-mlir".into())
        .stack_size(STACK_BYTES)
        .spawn(work)
        .map_err(|e| {
            format!(
                "cannot start the compiler's thread with a {} MiB stack: {e}",
                STACK_BYTES >> 20
            )
        })?;
    match handle.join() {
        Ok(value) => Ok(value),
        Err(panic) => std::panic::resume_unwind(panic),
    }
}
