//! The C ABI from C: compile tests/c/abi_smoke.c against the header and the
//! shared library cargo just built, run it.

use std::{path::PathBuf, process::Command};

#[test]
fn c_program_links_and_gets_errors_not_crashes() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    // target/<profile>/deps/this-test -> target/<profile>
    let libs = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(PathBuf::from))
        .expect("the test runs from target/<profile>/deps");
    // `cargo test` builds the rlib only; the shared library comes from a
    // plain build of the package (quick when it is up to date).
    let profile = if cfg!(debug_assertions) {
        vec![]
    } else {
        vec!["--release"]
    };
    let built = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "-p", "symm-runtime", "--lib"])
        .args(profile)
        .status()
        .expect("cargo runs");
    assert!(built.success(), "building libsymm_runtime failed");
    let program = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("abi_smoke");
    let compiled = Command::new("cc")
        .arg(manifest.join("tests/c/abi_smoke.c"))
        .arg("-I")
        .arg(manifest.join("include"))
        .arg("-L")
        .arg(&libs)
        .arg("-lsymm_runtime")
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .arg("-o")
        .arg(&program)
        .status()
        .expect("a C compiler");
    assert!(compiled.success(), "compiling abi_smoke.c failed");
    let output = Command::new(&program)
        .env_remove("RANK")
        .output()
        .expect("abi_smoke runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(stdout.matches("error as expected").count(), 6, "{stdout}");
}
