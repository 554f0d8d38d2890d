//! Runs the lit suite in `test/` with LLVM's own `lit` and `FileCheck`
//! against the `symm-opt` that cargo just built; fails when lit fails.

use std::{env, path::PathBuf, process::Command};

fn llvm_bin_dir() -> PathBuf {
    let prefix = env::var("MLIR_SYS_220_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-22".into());
    PathBuf::from(prefix).join("bin")
}

#[test]
fn lit_suite() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let tools_dir = PathBuf::from(env!("CARGO_BIN_EXE_symm-opt"))
        .parent()
        .expect("a binary lives in a directory")
        .to_path_buf();
    let llvm_bin = llvm_bin_dir();
    let lit = env::var_os("SYMM_LIT").map_or_else(|| llvm_bin.join("lit"), PathBuf::from);
    let exec_root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("lit");

    let status = Command::new(&lit)
        .arg("-sv")
        .arg(repo.join("test"))
        .arg(format!("--param=symm_tools_dir={}", tools_dir.display()))
        .arg(format!("--param=llvm_tools_dir={}", llvm_bin.display()))
        .arg(format!("--param=exec_root={}", exec_root.display()))
        .status()
        .unwrap_or_else(|error| {
            panic!(
                "cannot run {} ({error}); install the LLVM 22 tools with `./dev setup`",
                lit.display()
            )
        });
    assert!(
        status.success(),
        "lit reported failures (exit status {status})"
    );
}
