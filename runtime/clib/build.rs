//! Gives libsymm_runtime.so (this package's cdylib) its SONAME, so that programs linked against it
//! record the name, not the path they found it at: `libsymm_runtime.so.M`,
//! or `libsymm_runtime.so.0.N` while the version is 0.x (where a minor
//! version may break the ABI). cmake/install.cmake installs the library
//! under this name (the lit test test/Integration/cmake_package.mlir checks
//! that the two agree).

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_default();
    let minor = std::env::var("CARGO_PKG_VERSION_MINOR").unwrap_or_default();
    let abi = if major == "0" {
        format!("0.{minor}")
    } else {
        major
    };
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libsymm_runtime.so.{abi}");
    println!("cargo:rerun-if-changed=build.rs");
}
