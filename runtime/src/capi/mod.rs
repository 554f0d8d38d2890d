//! The C ABI: `runtime` is the application's (`include/symm_runtime.h`:
//! group init, symmetric allocation, peer tables, collective launch,
//! CUDA-graph capture), `compiled` the one programs compiled by
//! `symm-compile` call (`symm_rt_*`). Each function is a one-line call of
//! a `Session` method behind the guards here: every call returns 0 on
//! success or -1 with the message in `symm_last_error()` (the compiled
//! ABI reports through `compiled_call` instead); none panics across the
//! boundary. By-value types live in `abi_types`.
//!
//! Safety contract of every function (also in the header): handle
//! arguments are NULL or were returned by this library and not yet freed;
//! strings are NUL-terminated; out-pointers point at writable storage.
#![allow(clippy::missing_safety_doc)]

pub mod compiled;
pub mod runtime;

use crate::{Error, Result, session::Session};
use std::{
    cell::RefCell,
    ffi::{CString, c_char, c_int},
    panic::{AssertUnwindSafe, catch_unwind},
};

/// Everything one rank needs: its group, device, kernels and a stream.
pub type SymmRuntime = Session;

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn fail(message: String) -> c_int {
    set_last_error(&message);
    -1
}

/// Makes `message` this thread's `symm_last_error()`.
pub(crate) fn set_last_error(message: &str) {
    LAST_ERROR.with(|last| {
        *last.borrow_mut() = CString::new(message.replace('\0', " ")).unwrap_or_default();
    });
}

/// Runs `body`, turning errors and panics into -1 and a message.
fn guard(body: impl FnOnce() -> Result<()>) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 0,
        Ok(Err(error)) => fail(error.to_string()),
        Err(_) => fail("internal error: the symm runtime panicked".into()),
    }
}

fn non_null<'a, T>(pointer: *mut T, what: &str) -> Result<&'a mut T> {
    // SAFETY: callers pass handles that this library created.
    unsafe { pointer.as_mut() }.ok_or_else(|| Error::InvalidArgument(format!("{what} is NULL")))
}

/// The message of the last failed call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn symm_last_error() -> *const c_char {
    LAST_ERROR.with(|last| last.borrow().as_ptr())
}
