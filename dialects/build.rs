//! Builds the C++ half of the dialect (ODS, verifiers, C API, the symm-opt
//! shim) with CMake against the system MLIR, and tells rustc how to link it
//! and where the `.td` files are for `melior::dialect!`.

use std::{env, path::PathBuf};

fn main() {
    let manifest = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.parent().expect("dialects/ lives in the workspace");
    let prefix = env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());

    let out = cmake::Config::new(root)
        .generator("Ninja")
        .profile("Release")
        .define("MLIR_DIR", format!("{prefix}/lib/cmake/mlir"))
        .define("LLVM_DIR", format!("{prefix}/lib/cmake/llvm"))
        .build_target("symm-native")
        .build();

    // Our archives go before mlir-sys's MLIR archives on the link line,
    // because this crate depends on mlir-sys.
    println!(
        "cargo:rustc-link-search=native={}",
        out.join("build/lib").display()
    );
    println!("cargo:rustc-link-lib=static=SymmCAPI");
    println!("cargo:rustc-link-lib=static=SymmConversion");
    println!("cargo:rustc-link-lib=static=SymmMemDialect");
    println!("cargo:rustc-link-lib=static=CudaGraphDialect");

    println!(
        "cargo:rustc-env=SYMM_TD_INCLUDE_DIR={}",
        manifest.join("include").display()
    );
    for path in ["include", "lib", "../CMakeLists.txt", "CMakeLists.txt"] {
        println!("cargo:rerun-if-changed={}", manifest.join(path).display());
    }
    println!("cargo:rerun-if-env-changed=MLIR_SYS_220_PREFIX");
}
