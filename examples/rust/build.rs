//! Compiles the layers these apps call (symm-build runs symm-compile's
//! library here and links the objects in), so that `cargo build -p
//! symm-examples` needs no hand step.

fn main() {
    if let Err(message) = symm_build::Build::new()
        .file("../tp_mlp.mlir")
        .file("../llama_mlp.mlir")
        .compile()
    {
        eprintln!("{message}");
        std::process::exit(1);
    }
}
