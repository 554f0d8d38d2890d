//! `symm-fuzz`: feeds mutants of the lit suite and the examples to the
//! parser, to every symm pipeline (in process, each input in a fresh
//! context) and, every few inputs, to `symm-compile` and `symm-opt` as
//! processes, through to the object file. No input may make them die of a
//! signal, panic, print an LLVM fatal error or hang.
//!
//! ```text
//! symm-fuzz [--seconds N | --inputs N] [--seed S] [--out DIR]
//!           [--tools DIR] [--process-every K]
//! ```
//!
//! Inputs run in batches, each in a forked child, so one crash cannot take
//! the campaign down or leave it running on corrupted state. Findings go
//! to DIR (default `target/fuzz`): `crash-*.mlir` (ours: a
//! panic, a crash inside our passes, a tool that died of a signal, an LLVM
//! fatal error), `hang-*.mlir`, and `upstream-*.mlir` (a crash of MLIR's
//! own parser, which the tools now recover from and report as a located
//! internal error). The last line sums the campaign; the exit status is 1
//! when anything of ours was found.

mod mutate;

use melior::{Context, pass::PassManager};
use mutate::{Rng, mutate};
use std::{
    path::{Path, PathBuf},
    process::{Command, ExitCode, Stdio},
    sync::{
        Arc,
        atomic::{AtomicU64, Ordering},
    },
    time::{Duration, Instant},
};
use symm_dialects::ffi;

/// Pipelines run in process, on `builtin.module` (empty: parse and verify).
const PIPELINES: &[(&str, &str)] = &[
    ("verify", ""),
    (
        "middle-end",
        "builtin.module(func.func(symm-mem-verify-groups),symm-mem-middle-end,canonicalize)",
    ),
    (
        "symm-to-gpu",
        "builtin.module(func.func(symm-mem-to-dps,symm-mem-fuse-epilogue,\
         symm-mem-select-all-reduce),symm-mem-realize,symm-mem-plan,symm-mem-expand-collectives,gpu.module(inline),\
         convert-symm-mem-to-runtime,\
         func.func(symm-linalg-rows-to-gpu))",
    ),
    (
        "cudagraph",
        "builtin.module(cudagraph-partition,cudagraph-hoist-allocs)",
    ),
    ("symm-to-llvm", "builtin.module(symm-to-llvm)"),
];

/// The whole compiler is slow; it gets one input in this many.
const FULL_PIPELINE_EVERY: u64 = 16;

/// An input running longer than this is a hang.
const HANG: Duration = Duration::from_secs(60);

struct Options {
    seconds: Option<u64>,
    inputs: Option<u64>,
    seed: u64,
    out: PathBuf,
    tools: PathBuf,
    process_every: u64,
    /// Runs this batch alone, in this process (to reproduce a finding).
    only_batch: Option<u64>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options {
        seconds: None,
        inputs: None,
        seed: 1,
        out: PathBuf::from("target/fuzz"),
        tools: std::env::current_exe()
            .ok()
            .and_then(|p| p.parent().map(Path::to_path_buf))
            .unwrap_or_default(),
        process_every: 50,
        only_batch: None,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or(format!("{arg} needs a value"));
        let number = |v: &String| {
            v.parse::<u64>()
                .map_err(|_| format!("{arg}: '{v}' is no number"))
        };
        match arg.as_str() {
            "--seconds" => options.seconds = Some(number(value()?)?),
            "--inputs" => options.inputs = Some(number(value()?)?),
            "--seed" => options.seed = number(value()?)?,
            "--process-every" => options.process_every = number(value()?)?.max(1),
            "--only-batch" => options.only_batch = Some(number(value()?)?),
            "--out" => options.out = value()?.into(),
            "--tools" => options.tools = value()?.into(),
            "-h" | "--help" => return Err("help".into()),
            other => return Err(format!("unknown option '{other}'")),
        }
    }
    if options.seconds.is_none() && options.inputs.is_none() {
        options.seconds = Some(60);
    }
    Ok(options)
}

/// The lit suite's and the examples' inputs, split at `// -----`.
fn seeds(repo: &Path) -> Vec<String> {
    let mut files = Vec::new();
    let mut folders = vec![repo.join("test"), repo.join("examples"), repo.join("bench")];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() && !path.ends_with("Output") {
                folders.push(path);
            } else if path.extension().is_some_and(|e| e == "mlir") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
        .iter()
        .filter_map(|f| std::fs::read(f).ok())
        .flat_map(|bytes| {
            String::from_utf8_lossy(&bytes)
                .split("// -----")
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|chunk| chunk.contains("func.func") || chunk.contains("module"))
        .collect()
}

#[derive(Default)]
struct Tally {
    inputs: u64,
    parsed: u64,
    runs: [u64; PIPELINES.len()],
    passed: [u64; PIPELINES.len()],
    processes: u64,
    upstream: u64,
    /// Batches that died of heap damage MLIR's parser did (see BATCH).
    upstream_memory: u64,
    ours: u64,
    /// Headers symm-compile wrote, and those that did not compile.
    headers: u64,
    bad_headers: u64,
}

/// The runtime's C header, which a generated header includes.
const RUNTIME_INCLUDE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../runtime/include");

/// Why the generated `header` does not compile as C or as C++, if it does
/// not (`cc`/`c++ -fsyntax-only`); None too when no compiler is there.
fn header_problem(header: &Path) -> Option<String> {
    for (compiler, language) in [("cc", "c"), ("c++", "c++")] {
        let output = Command::new(compiler)
            .args(["-fsyntax-only", "-x", language, "-I", RUNTIME_INCLUDE])
            .arg(header)
            .output()
            .ok()?;
        if !output.status.success() {
            return Some(format!(
                "the header does not compile as {language}: {}",
                String::from_utf8_lossy(&output.stderr)
                    .lines()
                    .find(|line| line.contains("error"))
                    .unwrap_or("")
            ));
        }
    }
    None
}

/// What one input did in process.
enum Outcome {
    Fine,
    /// MLIR's parser crashed (recovered): an upstream bug.
    UpstreamParserCrash,
    /// Ours: a crash in the passes (recovered) or a pass that panicked.
    Crash(String),
}

/// Counts the diagnostics by which our passes report a panic (pass_def.rs).
unsafe extern "C" fn note_panics(
    diagnostic: mlir_sys::MlirDiagnostic,
    data: *mut std::ffi::c_void,
) -> mlir_sys::MlirLogicalResult {
    let (_, message) = symm_dialects::diagnostic_text(diagnostic);
    if message.contains("a symm pass panicked") {
        // SAFETY: `data` is the counter `run_in_process` keeps alive.
        unsafe { &*data.cast::<AtomicU64>() }.fetch_add(1, Ordering::Relaxed);
    }
    mlir_sys::MlirLogicalResult { value: 1 }
}

/// Runs `input` through pipeline `index` in a fresh context.
fn run_in_process(input: &[u8], index: usize, tally: &mut Tally) -> Outcome {
    let context: Context = symm_dialects::create_context();
    context.enable_multi_threading(false);
    let internal = Arc::new(AtomicU64::new(0));
    // SAFETY: a live context; the data outlives it (the Arc is kept below).
    unsafe {
        mlir_sys::mlirContextAttachDiagnosticHandler(
            context.to_raw(),
            Some(note_panics),
            Arc::as_ptr(&internal).cast_mut().cast(),
            None,
        );
    }
    let parsed = symm_dialects::recovery::parse_source(context.to_raw(), input, "fuzz.mlir");
    if parsed.status == ffi::SYMM_RUN_CRASHED {
        // What the crash left must not be destroyed (Recovery.h).
        std::mem::forget(internal);
        std::mem::forget(context);
        return Outcome::UpstreamParserCrash;
    }
    if parsed.status != ffi::SYMM_RUN_OK || parsed.module.ptr.is_null() {
        return Outcome::Fine;
    }
    tally.parsed += 1;
    tally.runs[index] += 1;
    // SAFETY: a fresh module owned by nobody else.
    let module = unsafe { melior::ir::Module::from_raw(parsed.module) };
    let (_, pipeline) = PIPELINES[index];
    let mut ok = true;
    if !pipeline.is_empty() {
        let pass_manager = PassManager::new(&context);
        if melior::utility::parse_pass_pipeline(pass_manager.as_operation_pass_manager(), pipeline)
            .is_err()
        {
            return Outcome::Crash(format!("internal: pipeline {pipeline} does not parse"));
        }
        // SAFETY: a live pass manager and module.
        let status = unsafe {
            ffi::symmRunPassManagerRecovering(pass_manager.to_raw(), module.as_operation().to_raw())
        };
        if status == ffi::SYMM_RUN_CRASHED {
            let why = format!(
                "crash in {} ({})",
                PIPELINES[index].0,
                symm_dialects::recovery::last_crash()
            );
            std::mem::forget(pass_manager);
            std::mem::forget(module);
            std::mem::forget(internal);
            std::mem::forget(context);
            return Outcome::Crash(why);
        }
        ok = status == ffi::SYMM_RUN_OK;
    } else {
        use melior::ir::operation::OperationLike;
        ok &= module.as_operation().verify();
    }
    if internal.load(Ordering::Relaxed) > 0 {
        return Outcome::Crash(format!("a symm pass panicked in {}", PIPELINES[index].0));
    }
    if ok {
        tally.passed[index] += 1;
    }
    Outcome::Fine
}

/// Runs a tool on `file`; `Some(why)` when it failed in a way no input may
/// make it fail (a signal, a panic, an LLVM fatal error, a hang, an exit
/// status other than 0, 1 or 2).
fn run_process(tool: &Path, args: &[&str], file: &Path) -> Option<String> {
    let mut child = Command::new(tool)
        .arg(file)
        .args(args)
        .env("SYMM_MAX_MEMORY_GB", "4")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .ok()?;
    // Drained as it comes: a tool that writes more than a pipe holds (an
    // invalid module printed with its error) would otherwise block on the
    // write and look hung.
    let mut pipe = child.stderr.take()?;
    let reader = std::thread::spawn(move || {
        let mut text = Vec::new();
        let _ = std::io::Read::read_to_end(&mut pipe, &mut text);
        text
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() > HANG => {
                let _ = child.kill();
                let _ = child.wait();
                return Some(format!("{} hangs", tool.display()));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(2)),
            Err(e) => return Some(format!("waiting for {}: {e}", tool.display())),
        }
    };
    let stderr = reader.join().unwrap_or_default();
    let stderr = String::from_utf8_lossy(&stderr);
    let name = tool
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match status.code() {
        None => Some(format!("{name} died of a signal")),
        Some(_) if stderr.contains("panicked") => Some(format!("{name} panicked")),
        Some(_) if stderr.contains("LLVM ERROR") => Some(format!("{name}: LLVM fatal error")),
        // A recovered crash is one located line, never LLVM's stack dump.
        Some(_) if stderr.contains("Stack dump:") => Some(format!("{name} printed a stack dump")),
        Some(1) if !stderr.contains("error:") => {
            Some(format!("{name} exited with 1 without an 'error:' line"))
        }
        Some(0..=2) => None,
        Some(code) => Some(format!("{name} exited with {code}")),
    }
}

fn save(out: &Path, kind: &str, input: &[u8], why: &str, count: u64) {
    let path = out.join(format!("{kind}-{count:04}.mlir"));
    let mut text = format!("// {why}\n").into_bytes();
    text.extend_from_slice(input);
    let _ = std::fs::write(&path, text);
    eprintln!(
        "symm-fuzz: {kind}: {why} (input saved as {})",
        path.display()
    );
}

unsafe extern "C" {
    fn fork() -> i32;
    fn waitpid(pid: i32, status: *mut i32, options: i32) -> i32;
    fn _exit(status: i32) -> !;
}

/// Inputs per child process. A child ends its batch at the first crash it
/// recovers from: MLIR's state after a crash (even in a context left
/// alone) is not to be trusted for the next input. Small, because MLIR 22's
/// parser also corrupts the heap after some syntax errors without crashing
/// (a use-after-free in `Operation::dropAllReferences` when it cleans up
/// after "redefinition of block", seen under valgrind in mlir-opt-22
/// itself), which only a later allocation in the same process notices.
const BATCH: u64 = 20;

/// What a batch child reports to its parent, one number per field.
fn tally_line(t: &Tally) -> String {
    let mut fields = vec![
        t.inputs,
        t.parsed,
        t.processes,
        t.upstream,
        t.ours,
        t.upstream_memory,
        t.headers,
        t.bad_headers,
    ];
    fields.extend(t.runs);
    fields.extend(t.passed);
    fields
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

fn add_tally(total: &mut Tally, line: &str) {
    let n: Vec<u64> = line
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    let p = PIPELINES.len();
    if n.len() != 8 + 2 * p {
        return;
    }
    total.inputs += n[0];
    total.parsed += n[1];
    total.processes += n[2];
    total.upstream += n[3];
    total.ours += n[4];
    total.upstream_memory += n[5];
    total.headers += n[6];
    total.bad_headers += n[7];
    for i in 0..p {
        total.runs[i] += n[8 + i];
        total.passed[i] += n[8 + p + i];
    }
}

/// Runs batch `batch` (its own generator, so campaigns replay): at most
/// `count` inputs, until `deadline`; returns its tally.
fn run_batch(
    options: &Options,
    seeds: &[String],
    batch: u64,
    count: u64,
    deadline: Instant,
) -> Tally {
    let current = options.out.join("current.mlir");
    // A hang: the watchdog saves the input in flight and ends the child.
    let started = Arc::new(AtomicU64::new(0));
    let epoch = Instant::now();
    {
        let started = started.clone();
        let out = options.out.clone();
        let current = current.clone();
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(Duration::from_secs(1));
                let at = started.load(Ordering::Relaxed);
                let now = epoch.elapsed().as_millis() as u64;
                if at > 0 && now.saturating_sub(at) > HANG.as_millis() as u64 {
                    let input = std::fs::read(&current).unwrap_or_default();
                    save(
                        &out,
                        "hang",
                        &input,
                        "an input ran for over a minute in process",
                        0,
                    );
                    // SAFETY: ends the child.
                    unsafe { _exit(HUNG) }
                }
            }
        });
    }
    let mut rng = Rng::new(options.seed.wrapping_mul(1_000_003).wrapping_add(batch));
    let mut tally = Tally::default();
    let compile = options.tools.join("symm-compile");
    let opt = options.tools.join("symm-opt");
    let input_file = options.out.join(format!("process-input-{batch}.mlir"));
    while tally.inputs < count && Instant::now() < deadline {
        let seed = rng.pick(seeds).clone();
        let other = rng.pick(seeds).clone();
        let mut input = seed.into_bytes();
        for _ in 0..1 + rng.below(3) {
            let text = String::from_utf8_lossy(&input).into_owned();
            input = mutate(&text, &other, &mut rng);
        }
        tally.inputs += 1;
        let n = batch * BATCH + tally.inputs;
        let index = if n.is_multiple_of(FULL_PIPELINE_EVERY) {
            PIPELINES.len() - 1
        } else {
            (n as usize) % (PIPELINES.len() - 1)
        };
        let _ = std::fs::write(&current, &input);
        if let Some(dump) = std::env::var_os("SYMM_FUZZ_DUMP") {
            // Every input of the batch and its pipeline, to replay one by one.
            let _ = std::fs::write(
                Path::new(&dump).join(format!("{n:08}-{}.mlir", PIPELINES[index].0)),
                &input,
            );
        }
        started.store(epoch.elapsed().as_millis() as u64 + 1, Ordering::Relaxed);
        let outcome = run_in_process(&input, index, &mut tally);
        started.store(0, Ordering::Relaxed);
        if n.is_multiple_of(options.process_every) && compile.exists() && opt.exists() {
            tally.processes += 2;
            let _ = std::fs::write(&input_file, &input);
            let object_path = options.out.join(format!("process-output-{batch}.o"));
            let header = object_path.with_extension("h");
            let _ = std::fs::remove_file(&header);
            let object = object_path.to_string_lossy().into_owned();
            let findings = [
                run_process(
                    &compile,
                    &["-o", &object, "--emit=llvm,ptx,mlir"],
                    &input_file,
                ),
                run_process(
                    &opt,
                    &[
                        "--pass-pipeline=builtin.module(symm-to-llvm)",
                        "-o",
                        "/dev/null",
                    ],
                    &input_file,
                ),
            ];
            for why in findings.into_iter().flatten() {
                tally.ours += 1;
                save(&options.out, "crash", &input, &why, n);
            }
            // Every header symm-compile writes compiles, as C and as C++.
            if header.exists() {
                tally.headers += 1;
                if let Some(why) = header_problem(&header) {
                    tally.bad_headers += 1;
                    save(&options.out, "header", &input, &why, n);
                }
            }
        }
        match outcome {
            Outcome::Fine => {}
            Outcome::UpstreamParserCrash => {
                tally.upstream += 1;
                // The same few upstream bugs recur: keep the first batches'.
                if batch < 20 {
                    save(
                        &options.out,
                        "upstream",
                        &input,
                        "MLIR's parser crashed (recovered)",
                        n,
                    );
                }
                break;
            }
            Outcome::Crash(why) => {
                // The same rule as for a batch that dies: if symm-opt takes
                // the input through the same pipeline as a process, an
                // earlier input of the batch damaged the heap inside MLIR's
                // parser (see BATCH) and the crash only showed it.
                let _ = std::fs::write(&input_file, &input);
                let pipeline = format!("--pass-pipeline={}", PIPELINES[index].1);
                let mut args = vec!["-o", "/dev/null"];
                if !PIPELINES[index].1.is_empty() {
                    args.push(&pipeline);
                }
                if opt.exists() && run_process(&opt, &args, &input_file).is_none() {
                    tally.upstream_memory += 1;
                    save(
                        &options.out,
                        "upstream-memory",
                        &input,
                        &format!(
                            "{why} in a fuzzing batch; symm-opt takes this input through the \
                             same pipeline as a process: heap damage from an earlier input of \
                             the batch in MLIR's parser"
                        ),
                        n,
                    );
                } else {
                    tally.ours += 1;
                    save(&options.out, "crash", &input, &why, n);
                }
                break;
            }
        }
    }
    for stem in ["process-input", "process-output"] {
        for extension in ["mlir", "o", "h", "ll", "ptx", "llvm.mlir"] {
            let _ = std::fs::remove_file(options.out.join(format!("{stem}-{batch}.{extension}")));
        }
    }
    tally
}

/// A child's exit status when the watchdog found a hang.
const HUNG: i32 = 75;

fn main() -> ExitCode {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!(
                "symm-fuzz: {message}\nusage: symm-fuzz [--seconds N | --inputs N] [--seed S] \
                 [--out DIR] [--tools DIR] [--process-every K]"
            );
            return ExitCode::from(2);
        }
    };
    symm_dialects::recovery::enable_recovery();
    symm_passes::register_passes();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seeds = seeds(&repo);
    if seeds.is_empty() {
        eprintln!("symm-fuzz: no seeds under {}", repo.display());
        return ExitCode::FAILURE;
    }
    if let Err(e) = std::fs::create_dir_all(&options.out) {
        eprintln!("symm-fuzz: {}: {e}", options.out.display());
        return ExitCode::FAILURE;
    }
    let begin = Instant::now();
    let deadline = begin + Duration::from_secs(options.seconds.unwrap_or(u64::MAX / 4));
    if let Some(batch) = options.only_batch {
        let tally = run_batch(&options, &seeds, batch, BATCH, deadline);
        println!("symm-fuzz: batch {batch}: {}", tally_line(&tally));
        return ExitCode::SUCCESS;
    }
    let wanted = options.inputs.unwrap_or(u64::MAX);
    let mut total = Tally::default();
    let mut hangs = 0u64;
    let mut batch = 0u64;
    let report = options.out.join("batch-tally.txt");
    while total.inputs < wanted && Instant::now() < deadline {
        let count = BATCH.min(wanted - total.inputs);
        let _ = std::fs::remove_file(&report);
        // SAFETY: no thread of this process runs MLIR at the fork; the
        // child does its batch and ends with _exit.
        let pid = unsafe { fork() };
        if pid == 0 {
            let tally = run_batch(&options, &seeds, batch, count, deadline);
            let _ = std::fs::write(&report, tally_line(&tally));
            // SAFETY: ends the child without running destructors over
            // whatever a recovered crash left.
            unsafe { _exit(0) }
        }
        if pid < 0 {
            eprintln!("symm-fuzz: fork failed");
            return ExitCode::FAILURE;
        }
        let mut status = 0;
        // SAFETY: waits for the child just forked.
        unsafe { waitpid(pid, &mut status, 0) };
        let signal = status & 0x7f;
        let code = (status >> 8) & 0xff;
        match std::fs::read_to_string(&report) {
            Ok(line) if signal == 0 && code == 0 => add_tally(&mut total, &line),
            _ => {
                // The batch died: of a hang, or of a signal. Each tool then
                // gets the input in flight on its own: if neither dies of it
                // the batch died of heap damage an earlier input of it did
                // inside MLIR's parser (upstream; see BATCH).
                let current = options.out.join("current.mlir");
                let input = std::fs::read(&current).unwrap_or_default();
                if code == HUNG {
                    hangs += 1;
                } else {
                    let compile = options.tools.join("symm-compile");
                    let opt = options.tools.join("symm-opt");
                    let object = options.out.join("recheck.o").to_string_lossy().into_owned();
                    let tools_fine = compile.exists()
                        && run_process(&compile, &["-o", &object], &current).is_none()
                        && run_process(
                            &opt,
                            &[
                                "--pass-pipeline=builtin.module(symm-to-llvm)",
                                "-o",
                                "/dev/null",
                            ],
                            &current,
                        )
                        .is_none();
                    if tools_fine {
                        total.upstream_memory += 1;
                        if total.upstream_memory <= 5 {
                            save(
                                &options.out,
                                "upstream-memory",
                                &input,
                                &format!(
                                    "a fuzzing batch died (signal {signal}); both tools take \
                                     this input as processes: heap damage from an earlier \
                                     input of the batch in MLIR's parser"
                                ),
                                batch,
                            );
                        }
                    } else {
                        total.ours += 1;
                        save(
                            &options.out,
                            "crash",
                            &input,
                            &format!("the fuzzing process died (signal {signal}, status {code})"),
                            batch,
                        );
                    }
                }
                total.inputs += 1;
            }
        }
        batch += 1;
        if batch.is_multiple_of(50) {
            eprintln!(
                "symm-fuzz: {} inputs, {:.0} s, crashes of ours {}, hangs {hangs}",
                total.inputs,
                begin.elapsed().as_secs_f64(),
                total.ours
            );
        }
    }
    let seconds = begin.elapsed().as_secs_f64();
    let runs: Vec<String> = PIPELINES
        .iter()
        .enumerate()
        .map(|(i, (name, _))| format!("{name} {}/{}", total.passed[i], total.runs[i]))
        .collect();
    println!(
        "symm-fuzz: {} inputs in {seconds:.0} s ({:.0}/s) from {} seeds, seed {}: {} parsed; \
         pipelines (passed/run): {}; {} tool processes; headers written {}, not compiling {}; \
         crashes of ours {}, hangs {hangs}, \
         MLIR parser crashes recovered {}, batches that died or crashed with the tools fine on the \
         input in flight as processes (heap damage an earlier input did; MLIR 22's parser is \
         known to) {}",
        total.inputs,
        total.inputs as f64 / seconds.max(1e-9),
        seeds.len(),
        options.seed,
        total.parsed,
        runs.join(", "),
        total.processes,
        total.headers,
        total.bad_headers,
        total.ours,
        total.upstream,
        total.upstream_memory,
    );
    let _ = std::fs::remove_file(options.out.join("current.mlir"));
    let _ = std::fs::remove_file(&report);
    if total.ours > 0 || total.bad_headers > 0 || hangs > 0 {
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
