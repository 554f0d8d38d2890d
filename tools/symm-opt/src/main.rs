//! `symm-opt`: MLIR's own `mlir-opt` driver (MlirOptMain) with the symm
//! dialects, the upstream dialects the pipeline uses, every upstream pass,
//! and symm's Rust passes registered by name. It runs on a thread with a
//! large stack (deeply nested input recurses deeply), under crash recovery.

use std::{
    ffi::{CString, c_char},
    os::unix::ffi::OsStringExt,
    process::ExitCode,
};

fn main() -> ExitCode {
    // Arguments may hold any bytes except NUL, which a C string cannot.
    let args: Result<Vec<CString>, _> = std::env::args_os()
        .map(|arg| CString::new(arg.into_vec()))
        .collect();
    let Ok(args) = args else {
        eprintln!("symm-opt: an argument contains a NUL byte");
        return ExitCode::FAILURE;
    };
    let run = move || -> ExitCode {
        // The crash handlers, and this thread's alternate signal stack.
        symm_dialects::recovery::enable_recovery();
        symm_passes::register_passes();
        let mut argv: Vec<*mut c_char> = args.iter().map(|arg| arg.as_ptr().cast_mut()).collect();
        argv.push(std::ptr::null_mut());
        let argc = i32::try_from(args.len()).unwrap_or(i32::MAX);
        // SAFETY: argv is a NULL-terminated array of C strings (`args`)
        // that outlive the call.
        let code = unsafe { symm_dialects::ffi::symmOptMain(argc, argv.as_mut_ptr()) };
        // MLIR 22's parser can leave the heap damaged after some errors
        // (test/Integration/untrusted_input.mlir, block_twice): the process
        // ends here, without the thread's or the process's teardown.
        // symmOptMain flushed its output.
        symm_dialects::recovery::exit_now(code)
    };
    match symm_dialects::recovery::on_large_stack(run) {
        Ok(code) => code,
        Err(message) => {
            eprintln!("symm-opt: {message}");
            ExitCode::FAILURE
        }
    }
}
