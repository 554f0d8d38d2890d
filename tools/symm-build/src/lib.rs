//! `symm-build`: compiles symm MLIR programs from a crate's `build.rs` and
//! links them into its binaries, so that `cargo build` builds an app that
//! calls compiled layers with no hand steps (as `cc` does for C, or
//! `prost-build` with protoc).
//!
//! In `build.rs`'s `main`:
//!
//! ```no_run
//! symm_build::Build::new()
//!     .file("../tp_mlp.mlir")
//!     .compile()
//!     .expect("the layers compile");
//! ```
//!
//! and in the crate, for each program `NAME.mlir`:
//!
//! ```ignore
//! mod layer {
//!     include!(concat!(env!("OUT_DIR"), "/tp_mlp.rs"));
//! }
//! // unsafe { layer::tp_mlp_async(&mut session as *mut _ as *mut _, stream, ...) }
//! ```
//!
//! Each file becomes `OUT_DIR/<stem>.o`, its C header `<stem>.h` and its
//! Rust declarations `<stem>.rs` (generated from the same entry points as
//! the header; including them also links `symm_runtime`, which the objects
//! call, so the crate needs it as a dependency and nothing else). Each
//! object becomes a static library `symm_<stem>` that the package links.
//! Cargo reruns the script when a file changes.
//!
//! The compiler is the `symm-compile` executable: `$SYMM_COMPILE`, else
//! the first on `PATH` (`./dev install --prefix P` puts it in `P/bin`). So
//! an app's build needs no LLVM or MLIR. With the `in-process` feature
//! (what symm's own workspace uses) symm-compile's library runs in the
//! build script instead, which links MLIR 22.
//!
//! A program that does not compile is an `Err` naming it, after its
//! diagnostics on stderr (cargo shows them).

use std::path::{Path, PathBuf};

/// Names the compiler executable (default: `symm-compile` on `PATH`).
pub const SYMM_COMPILE: &str = "SYMM_COMPILE";

/// What to compile.
#[derive(Debug, Default)]
pub struct Build {
    files: Vec<PathBuf>,
    flags: Vec<String>,
    out_dir: Option<PathBuf>,
}

impl Build {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a program (a path relative to the package, as cargo runs
    /// build scripts from there).
    pub fn file(&mut self, path: impl AsRef<Path>) -> &mut Self {
        self.files.push(path.as_ref().to_path_buf());
        self
    }

    /// Adds a symm-compile flag (`--no-fuse-epilogue`, `--chip=sm_100a`, ...).
    pub fn flag(&mut self, flag: impl Into<String>) -> &mut Self {
        self.flags.push(flag.into());
        self
    }

    /// Where the objects and headers go (default: `$OUT_DIR`).
    pub fn out_dir(&mut self, dir: impl AsRef<Path>) -> &mut Self {
        self.out_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Compiles every file and prints the cargo directives that link the
    /// objects into the binaries and examples; returns the objects.
    pub fn compile(&self) -> Result<Vec<PathBuf>, String> {
        let out_dir =
            match &self.out_dir {
                Some(dir) => dir.clone(),
                None => PathBuf::from(std::env::var_os("OUT_DIR").ok_or(
                    "OUT_DIR is not set: call compile from a build script, or set out_dir",
                )?),
            };
        std::fs::create_dir_all(&out_dir).map_err(|e| format!("{}: {e}", out_dir.display()))?;
        println!("cargo:rerun-if-env-changed={SYMM_COMPILE}");
        let mut objects = Vec::new();
        for file in &self.files {
            println!("cargo:rerun-if-changed={}", file.display());
            let stem = file
                .file_stem()
                .ok_or_else(|| format!("{} names no file", file.display()))?;
            let object = out_dir.join(stem).with_extension("o");
            let mut command_line = vec![
                file.display().to_string(),
                "-o".to_owned(),
                object.display().to_string(),
                "--emit=rust".to_owned(),
            ];
            command_line.extend(self.flags.iter().cloned());
            run_compiler(command_line)
                .map_err(|message| format!("symm-compile {}: {message}", file.display()))?;
            // As a static library of its own, which rustc places before the
            // runtime's rlib on the link line (an object after it would
            // leave its calls into the runtime unresolved).
            let name = format!("symm_{}", stem.to_string_lossy());
            archive(&out_dir.join(format!("lib{name}.a")), &object)?;
            println!("cargo:rustc-link-lib=static={name}");
            objects.push(object);
        }
        println!("cargo:rustc-link-search=native={}", out_dir.display());
        Ok(objects)
    }
}

/// symm-compile's library, in this process.
#[cfg(feature = "in-process")]
fn run_compiler(command_line: Vec<String>) -> Result<(), String> {
    let args = symm_compile::args::parse(command_line).map_err(|e| e.to_string())?;
    symm_compile::compile(&args)
}

/// The symm-compile executable (`$SYMM_COMPILE`, else `PATH`'s).
#[cfg(not(feature = "in-process"))]
fn run_compiler(command_line: Vec<String>) -> Result<(), String> {
    let compiler = std::env::var_os(SYMM_COMPILE).unwrap_or_else(|| "symm-compile".into());
    run_executable(&compiler, &command_line)
}

/// Runs `compiler` with `command_line`, passing its diagnostics on.
#[cfg_attr(feature = "in-process", allow(dead_code))]
fn run_executable(compiler: &std::ffi::OsStr, command_line: &[String]) -> Result<(), String> {
    let output = std::process::Command::new(compiler)
        .args(command_line)
        .output()
        .map_err(|error| {
            format!(
                "cannot run {} ({error}): install symm's tools (./dev install --prefix P, then \
                 put P/bin on PATH) or set {SYMM_COMPILE} to the symm-compile executable",
                Path::new(&compiler).display()
            )
        })?;
    // Its diagnostics, for cargo to show.
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    if output.status.success() {
        return Ok(());
    }
    let last = String::from_utf8_lossy(&output.stderr)
        .lines()
        .last()
        .unwrap_or("")
        .trim_start_matches("symm-compile: ")
        .to_owned();
    Err(format!("{last} ({})", output.status))
}

/// `ar crs archive object` (`$AR` if set).
fn archive(archive: &Path, object: &Path) -> Result<(), String> {
    let ar = std::env::var("AR").unwrap_or_else(|_| "ar".to_owned());
    let _ = std::fs::remove_file(archive);
    let status = std::process::Command::new(&ar)
        .arg("crs")
        .arg(archive)
        .arg(object)
        .status()
        .map_err(|e| format!("{ar}: {e}"))?;
    if !status.success() {
        return Err(format!("{ar} crs {} failed ({status})", archive.display()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_compiler_says_what_to_install_or_set() {
        let error = run_executable("/nonexistent/symm-compile".as_ref(), &[]).unwrap_err();
        assert!(
            error.contains("cannot run /nonexistent/symm-compile"),
            "{error}"
        );
        assert!(
            error.contains("./dev install") && error.contains(SYMM_COMPILE),
            "{error}"
        );
    }

    /// With the library in this process (the executable's runs are the
    /// out-of-tree lit test's, test/Integration/cargo_consumer.mlir).
    #[cfg(feature = "in-process")]
    #[test]
    fn compiles_a_program_into_an_object_and_its_header() {
        let dir = std::env::temp_dir().join(format!("symm-build-test-{}", std::process::id()));
        let program = dir.join("scale.mlir");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            &program,
            "func.func @scale(%x: memref<16xf32>, %y: memref<16xf32>) {\n  \
             linalg.add ins(%x, %x : memref<16xf32>, memref<16xf32>) outs(%y : memref<16xf32>)\n  \
             return\n}\n",
        )
        .unwrap();
        let objects = Build::new().file(&program).out_dir(&dir).compile().unwrap();
        assert_eq!(objects, vec![dir.join("scale.o")]);
        assert!(dir.join("scale.o").is_file());
        assert!(dir.join("libsymm_scale.a").is_file());
        let header = std::fs::read_to_string(dir.join("scale.h")).unwrap();
        assert!(header.contains("scale("), "{header}");
        let rust = std::fs::read_to_string(dir.join("scale.rs")).unwrap();
        assert!(rust.contains("pub fn scale(") && rust.contains("use symm_runtime as _;"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[cfg(feature = "in-process")]
    #[test]
    fn a_program_that_does_not_compile_is_an_error() {
        let dir = std::env::temp_dir().join(format!("symm-build-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let program = dir.join("bad.mlir");
        // Parses, but a private function cannot own device memory.
        std::fs::write(
            &program,
            "func.func private @f() {\n  %a = memref.alloc() : memref<16xf32>\n  return\n}\n",
        )
        .unwrap();
        let error = Build::new()
            .file(&program)
            .out_dir(&dir)
            .compile()
            .unwrap_err();
        assert!(error.contains("bad.mlir"), "{error}");
        let bad_flag = Build::new()
            .file(&program)
            .flag("--bogus")
            .out_dir(&dir)
            .compile()
            .unwrap_err();
        assert!(bad_flag.contains("--bogus"), "{bad_flag}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
