//! `symm-launch -n N prog args...`: runs N ranks of `prog` with the
//! torchrun environment, prefixes each output line with its rank, and when
//! one rank fails, stops the others and exits with that rank's status.
//! A signal to the launcher (SIGINT, SIGTERM, SIGHUP) is forwarded to the
//! ranks (SIGKILL after 3 s for those still running); it then exits with
//! 128 + the signal; ranks still running after the timeout are
//! stopped, with status 124. `gpus` below the rank count shares GPUs:
//! rank r runs on GPU r mod gpus (`LOCAL_RANK`), which checks multi-rank
//! code on fewer GPUs; the ranks' kernels then take turns on a GPU, so
//! their timings mean nothing. The command line is the binary's
//! (tools/symm-launch).

use crate::error::{Error, Result};
use std::{
    io::{BufRead, BufReader, Read, Write},
    net::TcpListener,
    process::{Child, Command, ExitStatus, Stdio},
    sync::{
        atomic::{AtomicI32, Ordering},
        mpsc,
    },
    thread,
    time::{Duration, Instant},
};

/// What to launch.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaunchSpec {
    pub ranks: usize,
    pub program: String,
    pub args: Vec<String>,
    /// Ranks still running after this long are stopped.
    pub timeout: Option<Duration>,
    /// GPUs to spread the ranks over (rank r on GPU r mod gpus); `None`
    /// is one GPU per rank.
    pub gpus: Option<usize>,
}

impl LaunchSpec {
    /// The `LOCAL_RANK` (GPU ordinal) of `rank`.
    pub fn local_rank(&self, rank: usize) -> usize {
        match self.gpus {
            Some(gpus) if gpus > 0 => rank % gpus,
            _ => rank,
        }
    }

    /// The GPU count when some GPU runs more than one rank.
    pub fn shared_gpus(&self) -> Option<usize> {
        self.gpus.filter(|&gpus| gpus < self.ranks)
    }
}

/// Exit status when the ranks ran past the timeout (as timeout(1)'s).
pub const TIMED_OUT: i32 = 124;

/// The signal (SIGINT, SIGTERM, SIGHUP) the launcher received, if any.
static RECEIVED: AtomicI32 = AtomicI32::new(0);

extern "C" fn note_signal(signal: libc::c_int) {
    // Async-signal-safe: one atomic store.
    RECEIVED.store(signal, Ordering::SeqCst);
}

/// Catches the signals a user or a job system stops a launch with, so
/// that the ranks are stopped too instead of being orphaned.
fn catch_stop_signals() {
    for signal in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { libc::signal(signal, note_signal as *const () as libc::sighandler_t) };
    }
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
    catch_stop_signals();
    let started = Instant::now();
    let port = free_port()?;
    if let Some(gpus) = spec.shared_gpus() {
        eprintln!(
            "symm-launch: {} ranks share {gpus} GPU(s) (rank r on GPU r mod {gpus}): a check of \
             correctness; their kernels take turns, so timings mean nothing",
            spec.ranks
        );
    }
    let mut children: Vec<Child> = Vec::with_capacity(spec.ranks);
    let mut forwarders = Vec::new();
    for rank in 0..spec.ranks {
        let mut child = Command::new(&spec.program)
            .args(&spec.args)
            .env("RANK", rank.to_string())
            .env("LOCAL_RANK", spec.local_rank(rank).to_string())
            .env("WORLD_SIZE", spec.ranks.to_string())
            .env("LOCAL_WORLD_SIZE", spec.ranks.to_string())
            .env("GROUP_RANK", "0")
            .env("MASTER_ADDR", "127.0.0.1")
            .env("MASTER_PORT", port.to_string())
            // Never NVLink multicast (shared hosts).
            .env("NCCL_NVLS_ENABLE", "0")
            .env("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1")
            .env(crate::logging::LAUNCH_PREFIXES, "1")
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
    let mut stopped: Option<i32> = None;
    while pending > 0 {
        if stopped.is_none() {
            let signal = RECEIVED.load(Ordering::SeqCst);
            let late = spec.timeout.is_some_and(|limit| started.elapsed() > limit);
            if signal != 0 {
                eprintln!("symm-launch: received signal {signal}; forwarding it to the ranks");
                stopped = Some(128 + signal);
            } else if late {
                eprintln!(
                    "symm-launch: the ranks still run after {:.0} s (--timeout); stopping them",
                    spec.timeout.map_or(0.0, |t| t.as_secs_f64())
                );
                stopped = Some(TIMED_OUT);
            }
            if stopped.is_some() {
                // The signal itself when there is one, else SIGTERM.
                let with = if signal != 0 { signal } else { libc::SIGTERM };
                stop_all(&mut children, &exited, with);
            }
        }
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
            if !status.success() && failure.is_none() && stopped.is_none() {
                failure = Some((rank, status));
                eprintln!("symm-launch: rank {rank} failed ({status}); stopping the other ranks");
                stop_all(&mut children, &exited, libc::SIGTERM);
            }
        }
        thread::sleep(Duration::from_millis(10));
    }
    for forwarder in forwarders {
        let _ = forwarder.join();
    }
    Ok(match (stopped, failure) {
        (Some(code), _) => code,
        (None, Some((_, status))) => status.code().unwrap_or(1).max(1),
        (None, None) => 0,
    })
}

/// `signal`, then SIGKILL after a grace period, to every rank still running.
fn stop_all(children: &mut [Child], exited: &[bool], signal: libc::c_int) {
    for (child, _) in children.iter().zip(exited).filter(|(_, done)| !**done) {
        // SAFETY: signalling a child we started.
        unsafe { libc::kill(child.id() as i32, signal) };
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
