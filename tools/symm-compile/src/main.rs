//! `symm-compile`: a symm MLIR program to a host object file with its GPU
//! kernels embedded (PTX, JIT-compiled by the driver at load), plus a C
//! header declaring its entry points. Link the object with
//! `libsymm_runtime` and run it under `symm-launch`.
//!
//! ```text
//! symm-compile examples/tp_mlp.mlir -o tp_mlp.o [--emit=llvm,ptx,mlir]
//!              [--no-fuse-epilogue] [--one-shot-max-bytes=N]
//! ```

mod args;
mod header;
mod ptx;

use args::{Args, Emit, Libdevice};
use melior::{
    Context,
    diagnostic::DiagnosticSeverity,
    ir::{BlockLike, Module, RegionLike, operation::OperationLike},
    pass::PassManager,
};
use std::{ffi::CString, path::Path, process::ExitCode};
use symm_passes::{libdevice, registration::upstream_gpu_to_llvm};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match args::parse(&args) {
        Ok(args) => args,
        Err(message) => {
            eprintln!("symm-compile: {message}\n\n{}", args::USAGE);
            return ExitCode::from(2);
        }
    };
    match compile(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("symm-compile: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The pass pipeline for `args`, on `builtin.module`, linking `libdevice`.
fn pipeline(args: &Args, libdevice: Option<&str>) -> String {
    let fuse = if args.fuse_epilogue {
        ",symm-mem-fuse-epilogue"
    } else {
        ""
    };
    // Selection comes before realize: a two-shot's output may need to
    // become symmetric (its push lands in the peers' outputs).
    let max = args.one_shot_max_bytes;
    format!(
        "builtin.module(func.func(symm-mem-to-dps{fuse},\
         symm-mem-select-all-reduce{{one-shot-max-bytes={max}}}),symm-mem-realize,symm-mem-plan,\
         convert-symm-mem-to-gpu{{one-shot-max-bytes={max} cuda-graphs={graphs}}},\
         {upstream})",
        graphs = args.cuda_graphs,
        upstream = upstream_gpu_to_llvm(libdevice),
    )
}

fn compile(args: &Args) -> Result<(), String> {
    symm_passes::register_passes();
    let context = symm_dialects::create_context();
    print_diagnostics(&context);

    let libdevice = match &args.libdevice {
        Libdevice::Search => libdevice::find(None)?,
        Libdevice::Path(path) => libdevice::find(Some(path))?,
        Libdevice::Off => None,
    };
    let libdevice = libdevice.as_ref().and_then(|p| p.to_str());

    let mut module = parse(&context, &args.input)?;
    let entries = header::entry_points(&module)?;

    let pass_manager = PassManager::new(&context);
    let pipeline = pipeline(args, libdevice);
    melior::utility::parse_pass_pipeline(pass_manager.as_operation_pass_manager(), &pipeline)
        .map_err(|error| format!("internal error: the pipeline does not parse: {error}"))?;
    pass_manager
        .run(&mut module)
        .map_err(|_| format!("{} does not compile (see the errors above)", args.input))?;
    check_lowered(&module)?;

    let stem = args.output.with_extension("");
    let lowered = module.as_operation().to_string();
    let header_path = stem.with_extension("h");
    write(
        &header_path,
        &header::render(&args.input, &entries, &header::lowered_entries(&module)),
    )?;
    if args.emit.contains(&Emit::Mlir) {
        write(&stem.with_extension("llvm.mlir"), &lowered)?;
    }
    let kernels = ptx::extract(&lowered);
    ptx::check_resolved(&kernels)?;
    if args.emit.contains(&Emit::Ptx) {
        write(&stem.with_extension("ptx"), &kernels)?;
    }
    let llvm_ir = args
        .emit
        .contains(&Emit::Llvm)
        .then(|| c_path(&stem.with_extension("ll")))
        .transpose()?;
    let object = c_path(&args.output)?;
    let mut error = String::new();
    // SAFETY: a live module, NUL-terminated paths, and a callback that
    // appends to `error`, which outlives the call.
    let ok = unsafe {
        symm_dialects::ffi::symmEmitLLVM(
            module.as_operation().to_raw(),
            llvm_ir.as_ref().map_or(std::ptr::null(), |p| p.as_ptr()),
            object.as_ptr(),
            Some(append_message),
            (&mut error as *mut String).cast(),
        )
    };
    if !ok {
        return Err(error);
    }
    Ok(())
}

unsafe extern "C" fn append_message(text: mlir_sys::MlirStringRef, data: *mut std::ffi::c_void) {
    // SAFETY: `data` is the String passed to symmEmitLLVM; `text` is valid
    // for `length` bytes.
    unsafe {
        let bytes = std::slice::from_raw_parts(text.data.cast::<u8>(), text.length);
        (*data.cast::<String>()).push_str(&String::from_utf8_lossy(bytes));
    }
}

fn c_path(path: &Path) -> Result<CString, String> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| format!("{} contains a NUL byte", path.display()))
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Parses `path` with file locations, so diagnostics point into it.
fn parse<'c>(context: &'c Context, path: &str) -> Result<Module<'c>, String> {
    if !Path::new(path).is_file() {
        return Err(format!("{path}: no such file"));
    }
    let c_path = CString::new(path).map_err(|_| format!("{path} contains a NUL byte"))?;
    // SAFETY: a live context and a NUL-terminated path.
    let raw = unsafe {
        mlir_sys::mlirModuleCreateParseFromFile(
            context.to_raw(),
            mlir_sys::MlirStringRef {
                data: c_path.as_ptr(),
                length: path.len(),
            },
        )
    };
    if raw.ptr.is_null() {
        return Err(format!("{path} does not parse (see the errors above)"));
    }
    // SAFETY: a fresh module owned by nobody else.
    Ok(unsafe { Module::from_raw(raw) })
}

/// After the pipeline only the LLVM dialect and the embedded kernels may
/// remain; anything else names the op and where it came from.
fn check_lowered(module: &Module) -> Result<(), String> {
    let mut leftovers = Vec::new();
    collect_leftovers(&module.as_operation(), &mut leftovers);
    if leftovers.is_empty() {
        return Ok(());
    }
    Err(format!(
        "these ops were not lowered to LLVM:\n{}",
        leftovers.join("\n")
    ))
}

fn collect_leftovers<'c: 'a, 'a>(op: &impl OperationLike<'c, 'a>, out: &mut Vec<String>) {
    let name = op.name().as_string_ref().as_str().unwrap_or("").to_owned();
    // gpu.launch_func stays: the LLVM IR translation turns it into the
    // mgpu* launch calls.
    let allowed = name.starts_with("llvm.")
        || matches!(
            name.as_str(),
            "builtin.module" | "gpu.binary" | "gpu.launch_func"
        );
    if !allowed {
        out.push(format!(
            "  {}: '{name}'",
            plain_location(&op.location().to_string())
        ));
        return;
    }
    if name == "gpu.binary" {
        return;
    }
    for region in op.regions() {
        let mut block = region.first_block();
        while let Some(b) = block {
            let mut next = b.first_operation();
            while let Some(inner) = next {
                collect_leftovers(&inner, out);
                next = inner.next_in_block();
            }
            block = b.next_in_region();
        }
    }
}

/// Prints diagnostics as `file:line:col: error: message`.
fn print_diagnostics(context: &Context) {
    context.attach_diagnostic_handler(|diagnostic| {
        let severity = match diagnostic.severity() {
            DiagnosticSeverity::Error => "error",
            DiagnosticSeverity::Warning => "warning",
            DiagnosticSeverity::Note => "note",
            DiagnosticSeverity::Remark => return true,
        };
        let location = plain_location(&diagnostic.location().to_string());
        eprintln!("{location}: {severity}: {diagnostic}");
        true
    });
}

/// `loc("file.mlir":3:5)` as `file.mlir:3:5`.
fn plain_location(location: &str) -> String {
    location
        .trim_start_matches("loc(")
        .trim_end_matches(')')
        .replace('"', "")
}
