//! `symm-kernels`: the runtime's library kernels, generated.
//!
//! ```text
//! symm-kernels --write runtime/kernels   # regenerate the PTX and the table
//! symm-kernels --check runtime/kernels   # exit 1 if anything there is stale
//! symm-kernels --print-ir ENTRY           # one kernel's IR, before lowering
//! ```
//!
//! Every kernel of `symm_protocol::library::all()` is built from the same
//! kernel IR as compiled programs' collectives and lowered by the same
//! pipeline (`symm_passes::library_kernels`). The runtime embeds
//! `DIR/table.rs` and the `.ptx` files it names.

use clap::{ArgGroup, Parser};
use std::{
    collections::BTreeMap,
    path::{Path, PathBuf},
    process::ExitCode,
};
use symm_passes::library_kernels as library;

#[derive(Parser, Debug)]
#[command(
    name = "symm-kernels",
    version,
    about = "Generates the runtime's library kernels (PTX and their table) from the compiler's \
             kernel IR, checks that the committed ones are current, or prints one kernel's IR"
)]
#[command(group(ArgGroup::new("mode").required(true).args(["write", "check", "print_ir"])))]
struct Cli {
    /// Regenerate DIR (runtime/kernels).
    #[arg(long, value_name = "DIR")]
    write: Option<PathBuf>,
    /// Exit 1 if anything in DIR is stale, missing or extra.
    #[arg(long, value_name = "DIR")]
    check: Option<PathBuf>,
    /// Print the IR of the library kernel ENTRY, before lowering.
    #[arg(long, value_name = "ENTRY")]
    print_ir: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match (cli.write, cli.check, cli.print_ir) {
        (Some(dir), _, _) => run(true, &dir),
        (None, Some(dir), _) => run(false, &dir),
        (None, None, Some(entry)) => print_ir(&entry),
        // clap requires one of them.
        (None, None, None) => return ExitCode::from(2),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("symm-kernels: {message}");
            ExitCode::FAILURE
        }
    }
}

/// LLVM's version, which the PTX depends on.
fn llvm_version() -> String {
    unsafe extern "C" {
        fn LLVMGetVersion(major: *mut u32, minor: *mut u32, patch: *mut u32);
    }
    let (mut major, mut minor, mut patch) = (0, 0, 0);
    // SAFETY: three out-pointers to locals.
    unsafe { LLVMGetVersion(&mut major, &mut minor, &mut patch) };
    format!("{major}.{minor}.{patch}")
}

/// Prints the `gpu.module` of the kernel `entry` as built, before lowering.
fn print_ir(entry: &str) -> Result<(), String> {
    symm_passes::register_passes();
    let context = symm_dialects::create_context();
    let kernel = symm_protocol::library::all()
        .find(|kernel| library::entry_of(*kernel).0 == entry)
        .ok_or_else(|| format!("no library kernel {entry}"))?;
    let module = library::build_module(&context, [kernel]).map_err(|e| e.to_string())?;
    let only = melior::ir::BlockLike::first_operation(&module.body())
        .ok_or("the library module has no kernel")?;
    let text = symm_dialects::op_text(melior::ir::operation::OperationLike::to_raw(&only));
    use std::io::Write;
    // A closed pipe (`| head`) is not an error of ours.
    let _ = writeln!(std::io::stdout(), "{text}");
    Ok(())
}

/// The files of `dir` as generated now: name -> text.
fn expected() -> Result<BTreeMap<String, String>, String> {
    symm_passes::register_passes();
    let context = symm_dialects::create_context();
    let kernels = library::generate(&context).map_err(|e| e.to_string())?;
    let mut files = BTreeMap::new();
    files.insert(
        "table.rs".to_owned(),
        library::render_table(&kernels, &llvm_version()),
    );
    for kernel in kernels {
        files.insert(format!("{}.ptx", kernel.name), kernel.ptx);
    }
    Ok(files)
}

fn run(write: bool, dir: &Path) -> Result<(), String> {
    let files = expected()?;
    let present: Vec<String> = match std::fs::read_dir(dir) {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok())
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".ptx") || name == "table.rs")
            .collect(),
        Err(_) if write => Vec::new(),
        Err(error) => return Err(format!("cannot read {}: {error}", dir.display())),
    };
    let extra: Vec<&String> = present.iter().filter(|n| !files.contains_key(*n)).collect();
    if write {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for name in extra {
            let path = dir.join(name);
            std::fs::remove_file(&path)
                .map_err(|e| format!("cannot remove {}: {e}", path.display()))?;
        }
        for (name, text) in &files {
            let path = dir.join(name);
            std::fs::write(&path, text)
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
        println!("wrote {} files to {}", files.len(), dir.display());
        return Ok(());
    }
    let mut stale: Vec<String> = extra
        .iter()
        .map(|n| format!("{n} (not generated)"))
        .collect();
    for (name, text) in &files {
        match std::fs::read_to_string(dir.join(name)) {
            Ok(committed) if committed == *text => {}
            Ok(_) => stale.push(format!("{name} (differs)")),
            Err(_) => stale.push(format!("{name} (missing)")),
        }
    }
    if stale.is_empty() {
        println!("{} files in {} are current", files.len(), dir.display());
        return Ok(());
    }
    Err(format!(
        "{} of the library kernels' files in {} are stale: {}{}; run `symm-kernels --write {}`",
        stale.len(),
        dir.display(),
        stale.iter().take(5).cloned().collect::<Vec<_>>().join(", "),
        if stale.len() > 5 { ", ..." } else { "" },
        dir.display()
    ))
}
