//! `symm-compile`'s command line; the compiler is the library
//! (`symm_compile::compile`).
//!
//! ```text
//! symm-compile examples/tp_mlp.mlir -o tp_mlp.o [--emit=llvm,ptx,mlir]
//!              [--no-fuse-epilogue] [--no-fuse-rows] [--one-shot-max-bytes=N]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    // SYMM_LOG=debug (RUST_LOG's syntax) traces the phases and the pipeline.
    symm_log::init();
    let args = match symm_compile::args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        // Help and version to stdout with status 0; errors with the usage, 2.
        Err(error) => error.exit(),
    };
    // Deeply nested input recurses deeply: the compiler runs on a large
    // stack (its crash handlers and alternate signal stack with it).
    match symm_dialects::recovery::on_large_stack(move || symm_compile::compile(&args)) {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(message)) | Err(message) => {
            eprintln!("symm-compile: {message}");
            ExitCode::FAILURE
        }
    }
}
