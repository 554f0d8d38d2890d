//! What happens when something fails inside compiled code: a module that
//! does not load, a kernel that does not launch, a runtime call that errs.
//!
//! Compiled code has no error channel of its own, so the runtime keeps one
//! per thread. While a compiled call runs (`symm_rt_enter_async` to
//! `symm_rt_exit_async`), the first failure is recorded and everything
//! after it in the call is skipped: no launch, no copy, no collective runs
//! on data that is already wrong. The asynchronous entry point then
//! returns -1 and keeps the message for `symm_status`; the synchronizing
//! one prints it and exits with status 1. Outside a call (a module loaded
//! by a global constructor) a failure prints and exits at once.

use std::cell::RefCell;

struct Call {
    /// Nested compiled calls share the outermost call's record.
    depth: usize,
    failure: Option<String>,
}

thread_local! {
    static CALL: RefCell<Option<Call>> = const { RefCell::new(None) };
}

/// A compiled call starts on this thread.
pub fn begin() {
    CALL.with(|call| {
        let mut call = call.borrow_mut();
        match call.as_mut() {
            Some(call) => call.depth += 1,
            None => {
                *call = Some(Call {
                    depth: 1,
                    failure: None,
                })
            }
        }
    });
}

/// A compiled call ends: its first failure, if any (the record is dropped
/// when the outermost call ends).
pub fn end() -> Option<String> {
    CALL.with(|call| {
        let mut slot = call.borrow_mut();
        let state = slot.as_mut()?;
        state.depth -= 1;
        let failure = state.failure.clone();
        if state.depth == 0 {
            *slot = None;
        }
        failure
    })
}

/// Whether the compiled call running on this thread has failed already
/// (so what follows in it must not run).
pub fn has_failed() -> bool {
    CALL.with(|call| call.borrow().as_ref().is_some_and(|c| c.failure.is_some()))
}

/// Whether a compiled call is running on this thread.
pub fn in_call() -> bool {
    CALL.with(|call| call.borrow().is_some())
}

/// Reports that `what` failed with `message`: recorded in the running call
/// (the first failure wins), or, outside one, printed with an exit.
pub fn failed(what: &str, message: &str) {
    let recorded = CALL.with(|call| match call.borrow_mut().as_mut() {
        Some(call) => {
            call.failure
                .get_or_insert_with(|| format!("{what} failed: {message}"));
            true
        }
        None => false,
    });
    if !recorded {
        fatal(what, message);
    }
}

/// Prints `symm: WHAT failed: MESSAGE` and ends the process with status 1.
pub fn fatal(what: &str, message: &str) -> ! {
    eprintln!("symm: {what} failed: {message}");
    std::process::exit(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_failure_of_a_call_is_kept_and_reported_once() {
        begin();
        assert!(in_call() && !has_failed());
        failed("cuLaunchKernel", "CUDA_ERROR_INVALID_HANDLE");
        failed("cuMemcpyAsync", "CUDA_ERROR_ILLEGAL_ADDRESS");
        assert!(has_failed());
        assert_eq!(
            end().as_deref(),
            Some("cuLaunchKernel failed: CUDA_ERROR_INVALID_HANDLE")
        );
        assert!(!in_call() && !has_failed());
        begin();
        assert_eq!(end(), None);
    }

    #[test]
    fn nested_calls_share_the_outer_record() {
        begin();
        begin();
        failed("inner", "x");
        assert_eq!(end().as_deref(), Some("inner failed: x"));
        assert!(has_failed(), "the outer call still skips what follows");
        assert_eq!(end().as_deref(), Some("inner failed: x"));
        assert!(!in_call());
    }
}
