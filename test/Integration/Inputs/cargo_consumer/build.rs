//! An app's build script, as symm's README shows it: symm-build runs the
//! installed symm-compile on the layer and links the object in.

fn main() {
    if let Err(message) = symm_build::Build::new().file("scale.mlir").compile() {
        eprintln!("{message}");
        std::process::exit(1);
    }
}
