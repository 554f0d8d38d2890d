//! The C ABI from C: compile tests/c/abi_smoke.c against the header and the
//! shared library cargo just built, run it.

use std::{path::PathBuf, process::Command};

/// Builds libsymm_runtime (`cargo test` builds the rlib only) and returns
/// the folder it is in: target/<profile>, the parent of this test's deps/.
fn shared_library_dir() -> PathBuf {
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
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(PathBuf::from))
        .expect("the test runs from target/<profile>/deps")
}

#[test]
fn c_program_links_and_gets_errors_not_crashes() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let libs = shared_library_dir();
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

#[test]
fn cpp_example_builds_and_reports_a_missing_launcher() {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let libs = shared_library_dir();
    let program = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("allreduce_cpp");
    let compiled = Command::new("c++")
        .arg("-std=c++17")
        .arg(manifest.join("../examples/cpp/allreduce.cpp"))
        .arg("-I")
        .arg(manifest.join("include"))
        .arg("-L")
        .arg(&libs)
        .arg("-lsymm_runtime")
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .arg("-o")
        .arg(&program)
        .status()
        .expect("a C++ compiler");
    assert!(
        compiled.success(),
        "compiling examples/cpp/allreduce.cpp failed"
    );
    let output = Command::new(&program)
        .env_remove("RANK")
        .output()
        .expect("the example runs");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("symm_init: environment: RANK is not set"),
        "{stderr}"
    );
}
