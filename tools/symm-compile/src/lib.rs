//! `symm-compile`: a symm MLIR program to a host object file with its GPU
//! kernels embedded (PTX, JIT-compiled by the driver at load), plus a C
//! header declaring its entry points. Link the object with
//! `libsymm_runtime` and run it under `symm-launch`. The compiler is this
//! library (`compile`), which the `symm-compile` binary and `symm-build`
//! (for Rust build scripts) call.
//!
//! ```text
//! symm-compile examples/tp_mlp.mlir -o tp_mlp.o [--emit=llvm,ptx,mlir]
//!              [--no-fuse-epilogue] [--no-fuse-rows] [--one-shot-max-bytes=N]
//! ```

pub mod args;
mod c_names;
mod header;
mod location;
mod top_level;

pub use args::{Args, Emit, Libdevice};
use melior::{
    Context,
    ir::{BlockLike, Module, RegionLike, operation::OperationLike},
    pass::PassManager,
};
use std::{cell::RefCell, collections::HashSet, ffi::CString, io::Read, path::Path};
use symm_passes::{
    gpu_codegen::{libdevice, ptx},
    registration::{early_launch_rows, upstream_gpu_to_llvm},
};

/// A byte bound as its pass option: -1 (by the world size) when left out,
/// and past i64 saturated rather than wrapped into that -1.
fn by_world(bytes: Option<u64>) -> i64 {
    bytes.map_or(-1, |bytes| i64::try_from(bytes).unwrap_or(i64::MAX))
}

/// The pass pipeline for `args`, on `builtin.module`, linking `libdevice`.
fn pipeline(args: &Args, libdevice: Option<&str>) -> String {
    let fuse = match (args.fuse_epilogue, args.fuse_rows) {
        (false, _) => "",
        (true, true) => ",symm-mem-fuse-epilogue",
        (true, false) => ",symm-mem-fuse-epilogue{fuse-rows=false}",
    };
    // Selection comes before realize: a two-shot's output may need to
    // become symmetric (its push lands in the peers' outputs).
    let limits = format!(
        "one-shot-max-bytes={} two-rank-push-max-bytes={} lamport-max-bytes={}",
        by_world(args.one_shot_max_bytes),
        args.two_rank_push_max_bytes,
        args.lamport_max_bytes
    );
    // The wgmma GEMV: `args::parse` refused it for a chip without wgmma.
    let wgmma = format!(
        "wgmma-gemv={} wgmma-gemv-few={} wgmma-gemv-max-rows={} wgmma-gemv-prefetch={} wgmma-gemv-stages={} wgmma-gemv-evict-first={} wgmma-gemv-short={} wgmma-gemv-after-gemv={} wgmma-gemv-eight-rows={} wgmma-gemv-cluster={}",
        args.matmul_wgmma_gemv,
        args.matmul_wgmma_gemv_few,
        args.matmul_wgmma_gemv_max_rows,
        args.matmul_wgmma_gemv_prefetch,
        args.matmul_wgmma_gemv_stages,
        args.matmul_wgmma_gemv_evict_first,
        args.matmul_wgmma_gemv_short,
        args.matmul_wgmma_gemv_after_gemv,
        args.matmul_wgmma_gemv_eight_rows,
        args.matmul_wgmma_gemv_cluster
    );
    format!(
        "builtin.module(func.func(symm-mem-to-dps{fuse},\
         symm-mem-select-all-reduce{{{limits}}},symm-mem-split-k{{max-rows={split_k} slices={slices} min-k={min_k}}}),\
         symm-mem-realize,symm-mem-plan{{matmul-groups={groups}}},\
         cudagraph-partition,cudagraph-hoist-allocs,\
         symm-mem-expand-collectives{{{limits} rows-two-shot-max-bytes={rows_two_shot} rows-lamport-max-bytes={rows_lamport} lamport-send={lamport_send} launch-dependents-rows={early_rows}}},\
         symm-linalg-matmul-to-gpu{{max-rows={matmul} bn={bn} bk={bk} stages={stages} warps={warps} launch-dependents={waits} prefetch={prefetch} row-scale={row_scale} stream-norm={stream_norm} norm-in-loop={norm_in_loop} wave-sms={sms} lamport-send={lamport_send} {tma} {wgmma} {gemv}}},gpu.module(inline),\
         convert-symm-mem-to-runtime{{cuda-graphs={graphs}}},\
         {upstream})",
        graphs = args.cuda_graphs,
        waits = args.chip.has_grid_dependency(),
        early_rows = early_launch_rows(args.chip),
        prefetch = args.matmul_prefetch,
        row_scale = args.matmul_row_scale,
        stream_norm = args.matmul_stream_norm,
        norm_in_loop = args.matmul_norm_in_loop,
        sms = args.sms,
        lamport_send = args.matmul_lamport_send,
        tma = match args.matmul_tma_gemv {
            Some([k_groups, stages, rows]) => format!(
                "tma-gemv=true tma-gemv-k-groups={k_groups} tma-gemv-stages={stages} tma-gemv-stage-rows={rows}"
            ),
            None => "tma-gemv=false".to_owned(),
        },
        wgmma = wgmma,
        rows_two_shot = by_world(args.rows_two_shot_max_bytes),
        rows_lamport = by_world(args.rows_lamport_max_bytes),
        matmul = args.matmul_max_rows,
        groups = args.matmul_max_rows > 0,
        bn = args.matmul_tile[0],
        bk = args.matmul_tile[1],
        stages = args.matmul_tile[2],
        warps = args.matmul_tile[3],
        gemv = match args.matmul_gemv {
            Some([columns, k_groups, unroll]) => format!(
                "gemv=true gemv-max-rows={} gemv-columns={columns} gemv-k-groups={k_groups} gemv-unroll={unroll}",
                args.matmul_gemv_max_rows
            ),
            None => "gemv=false".to_owned(),
        } + &match args.matmul_mma_gemv {
            Some([columns, k_groups, unroll]) => format!(
                " mma-gemv=true mma-gemv-rows={} mma-gemv-stage-a={} mma-gemv-columns={columns} mma-gemv-k-groups={k_groups} mma-gemv-unroll={unroll} mma-gemv-ahead={}",
                args.matmul_mma_gemv_rows, args.matmul_mma_stage_a, args.matmul_mma_gemv_ahead
            ),
            None => " mma-gemv=false".to_owned(),
        },
        slices = args.split_k_slices,
        min_k = args.split_k_min_k,
        split_k = if args.fuse_epilogue {
            args.split_k_max_rows
        } else {
            0
        },
        upstream = upstream_gpu_to_llvm(libdevice, args.chip, true),
    )
}

/// Reports a crash of MLIR or LLVM (recovered) and ends the process at
/// once: their state is whatever the crash left, so no destructor may run
/// over it (dialects/include/symm-c/Recovery.h).
/// Prints `message` and ends the process with status 1 at once, without
/// destructors: MLIR's state is not to be trusted after it.
fn crashed(message: &str) -> ! {
    eprintln!("symm-compile: {message}");
    symm_dialects::recovery::exit_now(1)
}

/// Compiles `args.input` into `args.output` (an object) and its header
/// beside it, with the extra outputs `args.emit` asks for. Errors are
/// messages (the input's diagnostics were printed on stderr first); a
/// crash of MLIR or LLVM ends the process, whose state it left undefined.
pub fn compile(args: &Args) -> Result<(), String> {
    let mut phases = Phases::new(args.verbose);
    let source = Source::read(&args.input)?;
    symm_dialects::recovery::enable_recovery();
    symm_passes::register_passes();
    // Declared before the context, so that it outlives the context's
    // diagnostic handler.
    let printer = Printer::new(source.name.clone(), args.remarks);
    let context = symm_dialects::create_context();
    // Crash recovery sees faults on this thread only.
    context.enable_multi_threading(false);
    printer.attach(&context);

    let libdevice = match &args.libdevice {
        Libdevice::Search => libdevice::find(None).map_err(|e| e.to_string())?,
        Libdevice::Path(path) => libdevice::find(Some(path)).map_err(|e| e.to_string())?,
        Libdevice::Off => None,
    };
    let libdevice = libdevice.as_ref().and_then(|p| p.to_str());

    let module = parse(&context, &source)?;
    phases.done("parse");
    top_level::check(&module)?;
    let entries = header::entry_points(&module)?;
    phases.done("read the entry points");

    let pass_manager = PassManager::new(&context);
    let pipeline = pipeline(args, libdevice);
    melior::utility::parse_pass_pipeline(pass_manager.as_operation_pass_manager(), &pipeline)
        .map_err(|error| format!("internal error: the pipeline does not parse: {error}"))?;
    // The input was verified when parsed and the result is verified
    // below; verifying the whole module after each of ~40 passes was a
    // third of the compile time (bench/compile_time).
    pass_manager.enable_verifier(args.verify_each);
    tracing::debug!("pipeline: {pipeline}");
    if args.verbose {
        eprintln!("symm-compile: pipeline: {pipeline}");
        // MLIR prints the pass timings when the pass manager goes.
        // SAFETY: a live pass manager.
        unsafe { mlir_sys::mlirPassManagerEnableTiming(pass_manager.to_raw()) };
    }
    // SAFETY: a live pass manager and module.
    let status = unsafe {
        symm_dialects::ffi::symmRunPassManagerRecovering(
            pass_manager.to_raw(),
            module.as_operation().to_raw(),
        )
    };
    match status {
        symm_dialects::ffi::SYMM_RUN_OK => {}
        symm_dialects::ffi::SYMM_RUN_CRASHED => crashed(&format!(
            "{}: internal error: MLIR crashed while compiling it ({}); it is a bug that the \
             input triggers: please report it with the input",
            source.name,
            symm_dialects::recovery::last_crash()
        )),
        _ => {
            return Err(format!(
                "{} does not compile (see the errors above)",
                source.name
            ));
        }
    }
    drop(pass_manager);
    phases.done("run the passes");
    if !module.as_operation().verify() {
        return Err(format!(
            "{}: internal error: the pipeline produced IR that is not valid (the errors \
             above); it is a bug that the input triggers: please report it with the input",
            source.name
        ));
    }
    check_lowered(&module)?;

    let stem = args.output.with_extension("");
    let lowered = symm_dialects::op_text(module.as_operation().to_raw());
    let header_path = stem.with_extension("h");
    write(
        &header_path,
        &header::render(&source.name, &entries, &header::lowered_entries(&module)),
    )?;
    if args.emit.contains(&Emit::Rust) {
        write(
            &stem.with_extension("rs"),
            &header::render_rust(&source.name, &entries, &header::lowered_entries(&module)),
        )?;
    }
    if args.emit.contains(&Emit::Signature) {
        write(
            &stem.with_extension("json"),
            &header::render_signature(&source.name, &entries, &header::lowered_entries(&module)),
        )?;
    }
    if args.emit.contains(&Emit::Mlir) {
        write(&stem.with_extension("llvm.mlir"), &lowered)?;
    }
    phases.done("write the header");
    let kernels = ptx::extract(&lowered);
    ptx::check_resolved(&kernels).map_err(|e| e.to_string())?;
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
    phases.done("translate to LLVM and emit the object");
    Ok(())
}

/// `-v`: how long each phase took, on stderr.
struct Phases {
    verbose: bool,
    start: std::time::Instant,
}

impl Phases {
    fn new(verbose: bool) -> Self {
        Self {
            verbose,
            start: std::time::Instant::now(),
        }
    }

    fn done(&mut self, phase: &str) {
        let ms = self.start.elapsed().as_secs_f64() * 1e3;
        tracing::debug!("{phase}: {ms:.1} ms");
        if self.verbose {
            eprintln!("symm-compile: {phase}: {ms:.1} ms");
        }
        self.start = std::time::Instant::now();
    }
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

/// The program's text and the name its diagnostics give it: the path, or
/// `<stdin>` for `-`.
struct Source {
    name: String,
    text: Vec<u8>,
}

impl Source {
    fn read(input: &str) -> Result<Source, String> {
        if input == "-" {
            let mut text = Vec::new();
            std::io::stdin()
                .read_to_end(&mut text)
                .map_err(|e| format!("cannot read the program from standard input: {e}"))?;
            return Ok(Source {
                name: "<stdin>".into(),
                text,
            });
        }
        if !Path::new(input).is_file() {
            return Err(format!("{input}: no such file"));
        }
        let text = std::fs::read(input).map_err(|e| format!("cannot read {input}: {e}"))?;
        Ok(Source {
            name: input.to_owned(),
            text,
        })
    }
}

/// Parses `source` with file locations under its name, so diagnostics
/// point into it; a crash of MLIR's parser is an error at the line that
/// makes it crash.
fn parse<'c>(context: &'c Context, source: &Source) -> Result<Module<'c>, String> {
    let name = &source.name;
    let parsed = symm_dialects::recovery::parse_source(context.to_raw(), &source.text, name);
    match parsed.status {
        symm_dialects::ffi::SYMM_RUN_OK if !parsed.module.ptr.is_null() => {
            // SAFETY: a fresh module owned by nobody else.
            Ok(unsafe { Module::from_raw(parsed.module) })
        }
        symm_dialects::ffi::SYMM_RUN_CRASHED => crashed(&format!(
            "{name}:{}:1: error: internal error in the MLIR parser ({}) on this line; it is an \
             MLIR bug that the input triggers: please report it with the input",
            parsed.crash_line.max(1),
            symm_dialects::recovery::last_crash()
        )),
        symm_dialects::ffi::SYMM_RUN_INVALID => {
            Err(format!("{name} is not valid (see the errors above)"))
        }
        // MLIR 22's parser can free an operation and write to it while it
        // cleans up after some errors (test/Integration/untrusted_input.mlir,
        // block_twice); tearing the context down afterwards then crashed
        // about one run in five. The input is rejected either way: end
        // without the teardown.
        _ => crashed(&format!("{name} does not parse (see the errors above)")),
    }
}

/// After the pipeline only the LLVM dialect and the embedded kernels may
/// remain; anything else is an error at the op (or the input op it came
/// from), one line each.
fn check_lowered(module: &Module) -> Result<(), String> {
    let mut leftovers = Vec::new();
    collect_leftovers(&module.as_operation(), &mut leftovers);
    if leftovers.is_empty() {
        return Ok(());
    }
    for line in &leftovers {
        eprintln!("{line}");
    }
    Err(format!(
        "{} ops were not lowered to LLVM (see the errors above)",
        leftovers.len()
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
            "{}: error: '{name}' is left after lowering: symm-compile has no lowering for \
             it (or for the construct it came from) in host code",
            location::plain(&symm_dialects::location_text(op.location().to_raw()))
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

/// Prints diagnostics as `file:line:col: error: message`, each distinct
/// one once (a check that fires at every call of the same function, at
/// the same op, says so once), and remarks only when asked. Messages and
/// locations may hold any bytes the input did (they quote it): they are
/// printed lossily, never trusted to be UTF-8. A diagnostic without a
/// location (an upstream pass that emits one at `UnknownLoc`) is printed at
/// the input, never at "unknown".
struct Printer {
    input: String,
    remarks: bool,
    printed: RefCell<HashSet<String>>,
}

impl Printer {
    fn new(input: String, remarks: bool) -> Self {
        Self {
            input,
            remarks,
            printed: RefCell::new(HashSet::new()),
        }
    }

    /// Makes this the context's diagnostic handler; it must outlive the
    /// context.
    fn attach(&self, context: &Context) {
        // SAFETY: a live context; the handler reads `self`, which the
        // caller keeps alive longer than the context.
        unsafe {
            mlir_sys::mlirContextAttachDiagnosticHandler(
                context.to_raw(),
                Some(print_diagnostic),
                (self as *const Printer).cast_mut().cast(),
                None,
            );
        }
    }

    fn print(&self, severity: &str, location: &str, message: &str) {
        let location = if location == "unknown" || location.is_empty() {
            self.input.as_str()
        } else {
            location
        };
        let line = format!("{location}: {severity}: {message}");
        if self.printed.borrow_mut().insert(line.clone()) {
            eprintln!("{line}");
        }
    }
}

unsafe extern "C" fn print_diagnostic(
    diagnostic: mlir_sys::MlirDiagnostic,
    printer: *mut std::ffi::c_void,
) -> mlir_sys::MlirLogicalResult {
    use mlir_sys::{
        MlirDiagnosticSeverity_MlirDiagnosticError as ERROR,
        MlirDiagnosticSeverity_MlirDiagnosticNote as NOTE,
        MlirDiagnosticSeverity_MlirDiagnosticRemark as REMARK,
        MlirDiagnosticSeverity_MlirDiagnosticWarning as WARNING,
    };
    // SAFETY: `printer` is the Printer that attached this handler, alive
    // as long as the context.
    let printer = unsafe { &*printer.cast::<Printer>() };
    // SAFETY: MLIR passes a live diagnostic for the duration of the call.
    let severity = match unsafe { mlir_sys::mlirDiagnosticGetSeverity(diagnostic) } {
        ERROR => "error",
        WARNING => "warning",
        NOTE => "note",
        REMARK if printer.remarks => "remark",
        _ => return mlir_sys::MlirLogicalResult { value: 1 },
    };
    let (location, message) = symm_dialects::diagnostic_text(diagnostic);
    printer.print(severity, &location::plain(&location), &message);
    mlir_sys::MlirLogicalResult { value: 1 }
}

#[cfg(test)]
mod tests {
    use super::pipeline;

    /// The Lamport bounds reach the collectives' expansion as given; the
    /// rows kernels' one is -1 (by the world size) when left out.
    #[test]
    fn passes_the_lamport_bounds() {
        let text = |flags: &[&str]| {
            let args = ["a.mlir", "--no-libdevice"].iter().chain(flags);
            let args = crate::args::parse(args.map(|arg| arg.to_string())).expect("a command line");
            pipeline(&args, None)
        };
        let plain = text(&[]);
        assert!(plain.contains(" lamport-max-bytes=4194304 "), "{plain}");
        assert!(plain.contains(" rows-lamport-max-bytes=-1 "), "{plain}");
        let set = text(&["--rows-lamport-max-bytes=262144"]);
        assert!(set.contains(" rows-lamport-max-bytes=262144 "), "{set}");
    }

    /// The one-shot limit and the rows kernels' two-shot bound reach the
    /// passes as given, -1 (by the world size) when left out, and a bound
    /// past i64 saturates rather than wrapping into that -1.
    #[test]
    fn passes_the_bounds_by_world_size() {
        for option in ["one-shot-max-bytes", "rows-two-shot-max-bytes"] {
            let limit = |value: Option<&str>| {
                let flag = value.map(|value| format!("--{option}={value}"));
                let args = ["a.mlir", "--no-libdevice"].map(str::to_owned);
                let args =
                    crate::args::parse(args.into_iter().chain(flag)).expect("a command line");
                let text = pipeline(&args, None);
                let key = format!("{option}=");
                let at = text.find(&key).expect("the option") + key.len();
                text[at..]
                    .split([' ', '}'])
                    .next()
                    .unwrap_or_default()
                    .to_owned()
            };
            assert_eq!(limit(None), "-1");
            assert_eq!(limit(Some("0")), "0");
            assert_eq!(limit(Some("65536")), "65536");
            assert_eq!(limit(Some("18446744073709551615")), i64::MAX.to_string());
        }
    }
}
