//! The GPU tests (src/bin/symm-gpu-tests.rs) with 2 ranks under
//! symm-launch. Without a CUDA device they report "skipped: no CUDA
//! device", and this test says so on the terminal (not captured).

use std::{io::Write, process::Command};

#[test]
fn gpu_tests_with_two_ranks() {
    let output = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
        .args(["-n", "2", env!("CARGO_BIN_EXE_symm-gpu-tests")])
        .output()
        .expect("symm-launch runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    if stdout.contains("skipped: no CUDA device") {
        let _ = writeln!(
            std::io::stderr(),
            "gpu_tests_with_two_ranks: skipped: no CUDA device"
        );
        assert!(output.status.success());
        return;
    }
    assert!(output.status.success(), "{stdout}{stderr}");
    assert!(!stdout.contains("FAIL"), "{stdout}");
    assert_eq!(stdout.matches(" passed, 0 failed").count(), 2, "{stdout}");
}
