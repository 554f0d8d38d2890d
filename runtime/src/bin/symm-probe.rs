//! A small rank program for the launcher's and the runtime's tests with
//! real processes: `symm-probe MODE [ARG]` under symm-launch.
//!
//! - `rendezvous`: join, all-gather ranks, print them and this rank's GPU
//!   (`LOCAL_RANK`).
//! - `fail-rank K`: rank K exits with status 3 after joining; others wait.
//! - `skip-rank K`: rank K exits at once, before joining; others time out.
//! - `fdpass`: each rank sends a memfd holding its name to every peer and
//!   prints what it reads from the ones it receives.
//! - `size-mismatch`: ranks publish different sizes for one allocation id.

use std::{
    io::Write,
    os::{fd::AsRawFd, unix::fs::FileExt},
    process::ExitCode,
    thread,
    time::Duration,
};
use symm_runtime::{Error, group::Group};

fn run(mode: &str, arg: Option<usize>) -> symm_runtime::Result<()> {
    if mode == "skip-rank" && std::env::var("RANK").ok().and_then(|r| r.parse().ok()) == arg {
        return Ok(());
    }
    let mut group = Group::from_env()?;
    let (rank, world) = (group.rank(), group.world_size());
    match mode {
        "rendezvous" | "skip-rank" => {
            let parts = group.all_gather("ranks", rank.to_string().as_bytes())?;
            let seen: Vec<String> = parts
                .iter()
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            println!(
                "rank {rank} of {world} saw ranks [{}] on GPU {}",
                seen.join(", "),
                group.config.local_rank
            );
        }
        "fail-rank" => {
            if Some(rank) == arg {
                eprintln!("rank {rank} failing on purpose");
                std::process::exit(3);
            }
            thread::sleep(Duration::from_secs(60));
        }
        "fdpass" => {
            let name = format!("memfd of rank {rank}");
            let mut file = memfd(&name)?;
            file.write_all(name.as_bytes())
                .map_err(|e| Error::io("probe: write memfd", e))?;
            for peer in group.peers() {
                group.fds.send(peer, "probe", file.as_raw_fd())?;
            }
            let peers = group.peers();
            let fds = group.fds.receive("probe", &peers, group.config.timeout)?;
            for (peer, fd) in peers.iter().zip(fds) {
                // Every receiver shares the sender's file offset (one open
                // file description), so read at offset 0 without moving it:
                // rewind-then-read raced with the other receivers.
                let received = std::fs::File::from(fd);
                let len = received
                    .metadata()
                    .map_err(|e| Error::io("probe: memfd size", e))?
                    .len();
                let mut bytes = vec![0u8; len as usize];
                received
                    .read_exact_at(&mut bytes, 0)
                    .map_err(|e| Error::io("probe: read memfd", e))?;
                let text = String::from_utf8_lossy(&bytes);
                println!("rank {rank} got from rank {peer}: {text}");
            }
            group
                .store
                .barrier("fdpass-done", rank, world, group.config.timeout)?;
        }
        "size-mismatch" => {
            let bytes = 1024 * (rank as u64 + 1);
            symm_runtime::group::agree_on_size(&mut group, "buffer-7", bytes)?;
        }
        other => {
            return Err(Error::InvalidArgument(format!(
                "unknown probe mode '{other}'"
            )));
        }
    }
    Ok(())
}

fn memfd(name: &str) -> symm_runtime::Result<std::fs::File> {
    let fd = nix_memfd(name)?;
    Ok(std::fs::File::from(fd))
}

fn nix_memfd(name: &str) -> symm_runtime::Result<std::os::fd::OwnedFd> {
    let name =
        std::ffi::CString::new(name).map_err(|_| Error::InvalidArgument("NUL in name".into()))?;
    // SAFETY: a plain syscall with a valid C string.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), 0) };
    if fd < 0 {
        return Err(Error::io(
            "probe: memfd_create",
            std::io::Error::last_os_error(),
        ));
    }
    // SAFETY: memfd_create returned a fresh descriptor.
    Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mode = args.first().map(String::as_str).unwrap_or("rendezvous");
    let arg = args.get(1).and_then(|a| a.parse().ok());
    match run(mode, arg) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(4)
        }
    }
}
