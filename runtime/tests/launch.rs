//! The launcher and the runtime's rendezvous with real processes: symm-launch
//! runs symm-probe ranks that meet through the TCP store and pass memfds.

use std::{
    process::{Command, Output},
    time::{Duration, Instant},
};

fn launch(ranks: usize, args: &[&str], env: &[(&str, &str)]) -> (Output, Duration) {
    let start = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
        .arg("-n")
        .arg(ranks.to_string())
        .arg(env!("CARGO_BIN_EXE_symm-probe"))
        .args(args)
        .envs(env.iter().copied())
        .output()
        .expect("symm-launch runs");
    (output, start.elapsed())
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn ranks_meet_through_the_store_with_prefixed_output() {
    let (output, _) = launch(3, &["rendezvous"], &[]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    for rank in 0..3 {
        assert!(
            stdout.contains(&format!(
                "[rank {rank}] rank {rank} of 3 saw ranks [0, 1, 2]"
            )),
            "{stdout}"
        );
    }
}

#[test]
fn gpus_below_the_rank_count_are_shared_round_robin() {
    let output = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
        .args([
            "-n",
            "3",
            "--gpus",
            "2",
            env!("CARGO_BIN_EXE_symm-probe"),
            "rendezvous",
        ])
        .output()
        .expect("symm-launch runs");
    let (stdout, stderr) = (text(&output.stdout), text(&output.stderr));
    assert!(output.status.success(), "{stdout}{stderr}");
    for (rank, gpu) in [(0, 0), (1, 1), (2, 0)] {
        assert!(
            stdout.contains(&format!(
                "[rank {rank}] rank {rank} of 3 saw ranks [0, 1, 2] on GPU {gpu}"
            )),
            "{stdout}"
        );
    }
    assert!(
        stderr.contains("3 ranks share 2 GPU(s)") && stderr.contains("timings mean nothing"),
        "{stderr}"
    );
    // Zero GPUs is a usage error, before anything starts.
    let zero = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
        .args(["-n", "2", "--gpus", "0", env!("CARGO_BIN_EXE_symm-probe")])
        .output()
        .expect("symm-launch runs");
    assert_eq!(zero.status.code(), Some(2));
    assert!(
        text(&zero.stderr).contains("--gpus"),
        "{}",
        text(&zero.stderr)
    );
}

#[test]
fn memfd_descriptors_pass_between_processes() {
    let (output, _) = launch(3, &["fdpass"], &[]);
    let stdout = text(&output.stdout);
    assert!(output.status.success(), "{stdout}{}", text(&output.stderr));
    for rank in 0..3 {
        for peer in (0..3).filter(|&p| p != rank) {
            assert!(
                stdout.contains(&format!(
                    "rank {rank} got from rank {peer}: memfd of rank {peer}"
                )),
                "{stdout}"
            );
        }
    }
}

#[test]
fn a_failing_rank_stops_the_others_and_sets_the_status() {
    // Rank 1 exits with 3; rank 0 would sleep a minute if not stopped.
    let (output, elapsed) = launch(2, &["fail-rank", "1"], &[]);
    assert_eq!(output.status.code(), Some(3));
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("[rank 1] rank 1 failing on purpose"),
        "{stderr}"
    );
    assert!(stderr.contains("symm-launch: rank 1 failed"), "{stderr}");
}

#[test]
fn a_rank_that_never_arrives_is_named_in_a_timeout() {
    let (output, elapsed) = launch(3, &["skip-rank", "2"], &[("SYMM_TIMEOUT_S", "1")]);
    assert!(!output.status.success());
    assert!(elapsed < Duration::from_secs(20), "took {elapsed:?}");
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("timed out after 1.0 s waiting for rank(s) [2]"),
        "{stderr}"
    );
}

#[test]
fn mismatched_sizes_fail_on_every_rank() {
    let (output, _) = launch(2, &["size-mismatch"], &[]);
    assert!(!output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("allocation 'buffer-7' has 1024 bytes on rank 0 but 2048 bytes on rank 1")
            || stderr.contains(
                "allocation 'buffer-7' has 2048 bytes on rank 1 but 1024 bytes on rank 0"
            ),
        "{stderr}"
    );
}

#[test]
fn bad_usage_is_an_error_not_a_panic() {
    for args in [
        &[][..],
        &["-n"][..],
        &["-n", "zero", "x"][..],
        &["-n", "0", "x"][..],
        &["-n", "2"][..],
        &["-n", "2", "--bogus", "x"][..],
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
            .args(args)
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(2), "{args:?}");
        // clap's error, pointing at the usage or --help; no panic.
        let stderr = text(&output.stderr);
        assert!(
            stderr.starts_with("error: ")
                && (stderr.contains("Usage: symm-launch") || stderr.contains("try '--help'"))
                && !stderr.contains("panicked"),
            "{args:?}: {stderr}"
        );
    }
    let output = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
        .args(["-n", "1", "/nonexistent/program"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
    assert!(text(&output.stderr).contains("cannot start /nonexistent/program"));
    let output = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
        .args(["-n", "1", "--timeout", "-3", "true"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn help_and_version_exit_zero() {
    for flag in ["--help", "--version"] {
        let output = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
            .arg(flag)
            .output()
            .expect("runs");
        assert_eq!(output.status.code(), Some(0), "{flag}");
        assert!(text(&output.stdout).contains("symm-launch"), "{flag}");
    }
}

#[test]
fn ranks_past_the_timeout_are_stopped_with_status_124() {
    let start = Instant::now();
    let output = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
        .args(["-n", "2", "--timeout", "0.5", "sleep", "30"])
        .output()
        .expect("runs");
    assert_eq!(output.status.code(), Some(124), "{}", text(&output.stderr));
    assert!(text(&output.stderr).contains("--timeout"));
    // SIGTERM ends a sleep at once: no 3 s grace, no 30 s sleep.
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn a_signal_to_the_launcher_stops_its_ranks() {
    // A sleep long enough, and of a length no other process has.
    let seconds = format!("{}.25", 1000 + std::process::id() % 10_000);
    let marker = format!("sleep {seconds}");
    let mut launcher = Command::new(env!("CARGO_BIN_EXE_symm-launch"))
        .args(["-n", "2", "sleep", &seconds])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("runs");
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY: signalling the child we started.
    unsafe { libc::kill(launcher.id() as i32, libc::SIGINT) };
    let status = launcher.wait().expect("waits");
    assert_eq!(status.code(), Some(128 + libc::SIGINT));
    let left = Command::new("pgrep")
        .args(["-f", &marker])
        .output()
        .expect("pgrep runs");
    assert!(
        text(&left.stdout).trim().is_empty(),
        "ranks left running: {}",
        text(&left.stdout)
    );
}

#[test]
fn symm_log_shows_the_rendezvous_and_nothing_prints_by_default() {
    let (quiet, _) = launch(2, &["rendezvous"], &[]);
    assert!(quiet.status.success());
    assert!(
        !text(&quiet.stderr).contains("[symm"),
        "{}",
        text(&quiet.stderr)
    );
    // One rank prefix per line: the launcher's.
    let (loud, _) = launch(2, &["rendezvous"], &[("SYMM_LOG", "info")]);
    assert!(loud.status.success());
    let stderr = text(&loud.stderr);
    for rank in 0..2 {
        assert!(
            stderr.contains(&format!(
                "[rank {rank}] [symm] info: joined group of 2 ranks at 127.0.0.1:"
            )),
            "{stderr}"
        );
    }
    // RUST_LOG's syntax: per-module filters, and RUST_LOG itself.
    let (module, _) = launch(
        1,
        &["rendezvous"],
        &[("SYMM_LOG", "symm_runtime::group=info")],
    );
    assert!(text(&module.stderr).contains("info: joined group"));
    let (other, _) = launch(
        1,
        &["rendezvous"],
        &[("SYMM_LOG", "symm_runtime::collectives=info")],
    );
    assert!(!text(&other.stderr).contains("joined group"));
    let (rust_log, _) = launch(1, &["rendezvous"], &[("RUST_LOG", "info")]);
    assert!(text(&rust_log.stderr).contains("info: joined group"));
    let (bad, _) = launch(1, &["rendezvous"], &[("SYMM_LOG", "symm_runtime=loud")]);
    assert!(bad.status.success());
    assert!(
        text(&bad.stderr).contains("SYMM_LOG=symm_runtime=loud is not a log filter"),
        "{}",
        text(&bad.stderr)
    );
}
