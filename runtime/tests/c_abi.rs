//! The C ABI from C: compile tests/c/abi_smoke.c against the header and the
//! shared library cargo just built, run it.

use std::{path::PathBuf, process::Command};

/// Builds libsymm_runtime.so (the symm-runtime-clib package's) and returns
/// the folder it is in: target/<profile>, the parent of this test's deps/.
fn shared_library_dir() -> PathBuf {
    let profile = if cfg!(debug_assertions) {
        vec![]
    } else {
        vec!["--release"]
    };
    let built = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()))
        .args(["build", "-p", "symm-runtime-clib"])
        .args(profile)
        .status()
        .expect("cargo runs");
    assert!(built.success(), "building libsymm_runtime failed");
    let dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(PathBuf::from))
        .expect("the test runs from target/<profile>/deps");
    // Programs record the SONAME (runtime/build.rs), which cargo does not
    // create: link it to the library, as an install does.
    let soname = soname(&dir.join("libsymm_runtime.so"));
    let link = dir.join(&soname);
    if std::fs::read_link(&link).is_err() {
        let _ = std::fs::remove_file(&link);
        std::os::unix::fs::symlink("libsymm_runtime.so", &link).expect("links the SONAME");
    }
    dir
}

/// The SONAME `library` carries (readelf -d).
fn soname(library: &std::path::Path) -> String {
    let dynamic = Command::new("readelf")
        .arg("-d")
        .arg(library)
        .output()
        .expect("readelf runs");
    let text = String::from_utf8_lossy(&dynamic.stdout);
    text.lines()
        .find_map(|line| line.split("soname: [").nth(1))
        .and_then(|rest| rest.split(']').next())
        .map(str::to_owned)
        .unwrap_or_else(|| panic!("{} has no SONAME:\n{text}", library.display()))
}

#[test]
fn the_shared_runtime_has_a_soname() {
    let dir = shared_library_dir();
    let name = soname(&dir.join("libsymm_runtime.so"));
    assert!(name.starts_with("libsymm_runtime.so."), "{name}");
}

/// Compiles `source` (relative to the runtime crate) with `compiler` and
/// `flags` against the header and libsymm_runtime; returns the program.
fn compile(compiler: &str, flags: &[&str], source: &str, name: &str) -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let libs = shared_library_dir();
    let program = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let compiled = Command::new(compiler)
        .args(flags)
        .arg(manifest.join(source))
        .arg("-I")
        .arg(manifest.join("include"))
        .arg("-L")
        .arg(&libs)
        .arg("-lsymm_runtime")
        .arg(format!("-Wl,-rpath,{}", libs.display()))
        .arg("-o")
        .arg(&program)
        .status()
        .unwrap_or_else(|e| panic!("{compiler} runs: {e}"));
    assert!(compiled.success(), "compiling {source} failed");
    program
}

#[test]
fn c_program_links_and_gets_errors_not_crashes() {
    let program = compile("cc", &[], "tests/c/abi_smoke.c", "abi_smoke");
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
    let program = compile(
        "c++",
        &["-std=c++17"],
        "../examples/cpp/allreduce.cpp",
        "allreduce_cpp",
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
