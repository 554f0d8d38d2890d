//! `symm-launch -n N prog args...`: runs N ranks of `prog` with the
//! torchrun environment, prefixes each output line with its rank, and when
//! one rank fails, stops the others and exits with that rank's status.

use crate::error::{Error, Result};
use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpListener,
    process::{Child, Command, ExitStatus, Stdio},
    sync::mpsc,
    thread,
    time::{Duration, Instant},
};

/// What to launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSpec {
    pub ranks: usize,
    pub program: String,
    pub args: Vec<String>,
}

pub const USAGE: &str = "usage: symm-launch -n N PROGRAM [ARGS...]";

/// Parses `-n N prog args...` (also `--nproc N`, `-nN`).
pub fn parse_args(args: &[String]) -> Result<LaunchSpec> {
    let bad = |why: &str| Error::InvalidArgument(format!("{why}\n{USAGE}"));
    let (ranks, rest) = match args.first().map(String::as_str) {
        Some("-n") | Some("--nproc") | Some("--nproc-per-node") => {
            (args.get(1), &args[2.min(args.len())..])
        }
        Some(flag) if flag.starts_with("-n") && flag.len() > 2 => {
            return parse_args(
                &[
                    vec!["-n".to_owned(), flag[2..].to_owned()],
                    args[1..].to_vec(),
                ]
                .concat(),
            );
        }
        _ => return Err(bad("the number of ranks (-n N) comes first")),
    };
    let ranks: usize = ranks
        .ok_or_else(|| bad("-n needs a number"))?
        .parse()
        .map_err(|_| bad("-n needs a number"))?;
    if ranks == 0 {
        return Err(bad("-n must be at least 1"));
    }
    let program = rest
        .first()
        .ok_or_else(|| bad("no program to launch"))?
        .clone();
    Ok(LaunchSpec {
        ranks,
        program,
        args: rest[1..].to_vec(),
    })
}

fn free_port() -> Result<u16> {
    let listener =
        TcpListener::bind("127.0.0.1:0").map_err(|e| Error::io("launcher: no free port", e))?;
    listener
        .local_addr()
        .map(|a| a.port())
        .map_err(|e| Error::io("launcher: no free port", e))
}

/// Copies `stream` line by line to `out`, prefixed with `[rank R]`.
fn forward(
    rank: usize,
    stream: impl Read + Send + 'static,
    to_stderr: bool,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(|l| l.ok()) {
            if to_stderr {
                let _ = writeln!(std::io::stderr().lock(), "[rank {rank}] {line}");
            } else {
                let _ = writeln!(std::io::stdout().lock(), "[rank {rank}] {line}");
            }
        }
    })
}

/// Runs the ranks; returns the exit code for the launcher.
pub fn launch(spec: &LaunchSpec) -> Result<i32> {
    let port = free_port()?;
    let mut children: Vec<Child> = Vec::with_capacity(spec.ranks);
    let mut forwarders = Vec::new();
    for rank in 0..spec.ranks {
        let mut child = Command::new(&spec.program)
            .args(&spec.args)
            .env("RANK", rank.to_string())
            .env("LOCAL_RANK", rank.to_string())
            .env("WORLD_SIZE", spec.ranks.to_string())
            .env("LOCAL_WORLD_SIZE", spec.ranks.to_string())
            .env("GROUP_RANK", "0")
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", port.to_string())
            // Never NVLink multicast (shared hosts).
            .env("NCCL_NVLS_ENABLE", "0")
            .env("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::io(format!("launcher: cannot start {}", spec.program), e))?;
        if let Some(out) = child.stdout.take() {
            forwarders.push(forward(rank, out, false));
        }
        if let Some(err) = child.stderr.take() {
            forwarders.push(forward(rank, err, true));
        }
        children.push(child);
    }

    let (done_tx, done_rx) = mpsc::channel::<(usize, ExitStatus)>();
    let mut pending = spec.ranks;
    let mut failure: Option<(usize, ExitStatus)> = None;
    let mut exited = vec![false; spec.ranks];
    while pending > 0 {
        for (rank, child) in children.iter_mut().enumerate() {
            if exited[rank] {
                continue;
            }
            if let Ok(Some(status)) = child.try_wait() {
                exited[rank] = true;
                let _ = done_tx.send((rank, status));
            }
        }
        while let Ok((rank, status)) = done_rx.try_recv() {
            pending -= 1;
            if !status.success() && failure.is_none() {
                failure = Some((rank, status));
                eprintln!("symm-launch: rank {rank} failed ({status}); stopping the other ranks");
                stop_all(&mut children, &exited);
            }
        }
        thread::sleep(Duration::from_millis(10));
    }
    for forwarder in forwarders {
        let _ = forwarder.join();
    }
    Ok(match failure {
        Some((_, status)) => status.code().unwrap_or(1).max(1),
        None => 0,
    })
}

/// SIGTERM, then SIGKILL after a grace period, to every rank still running.
fn stop_all(children: &mut [Child], exited: &[bool]) {
    for (child, _) in children.iter().zip(exited).filter(|(_, done)| !**done) {
        // SAFETY: signalling a child we started.
        unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    }
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if children
            .iter_mut()
            .all(|c| matches!(c.try_wait(), Ok(Some(_))))
        {
            return;
        }
        thread::sleep(Duration::from_millis(20));
    }
    for child in children.iter_mut() {
        let _ = child.kill();
    }
}

/// The launcher's `main`.
pub fn main() -> i32 {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match parse_args(&args).and_then(|spec| launch(&spec)) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("symm-launch: {error}");
            2
        }
    }
}
