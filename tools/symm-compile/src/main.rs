//! `symm-compile`'s command line; the compiler is the library
//! (`symm_compile::compile`).
//!
//! ```text
//! symm-compile examples/tp_mlp.mlir -o tp_mlp.o [--emit=llvm,ptx,mlir]
//!              [--no-fuse-epilogue] [--no-fuse-rows] [--one-shot-max-bytes=N]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = match symm_compile::args::parse(std::env::args().skip(1)) {
        Ok(args) => args,
        // Help and version to stdout with status 0; errors with the usage, 2.
        Err(error) => error.exit(),
    };
    match symm_compile::compile(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("symm-compile: {message}");
            ExitCode::FAILURE
        }
    }
}
