//! Passing file descriptors between processes: `SCM_RIGHTS` over `AF_UNIX`
//! sockets in the abstract namespace (nothing to clean up on disk). Each
//! process runs one listener; a peer's descriptor arrives tagged with the
//! allocation it belongs to and the sender's rank.

use crate::error::{Error, Result};
use nix::sys::socket::{ControlMessage, ControlMessageOwned, MsgFlags, recvmsg, sendmsg};
use std::{
    collections::HashMap,
    io::{IoSlice, IoSliceMut},
    os::{
        fd::{AsRawFd, FromRawFd, OwnedFd, RawFd},
        linux::net::SocketAddrExt,
        unix::net::{SocketAddr, UnixListener, UnixStream},
    },
    sync::{Arc, Condvar, Mutex},
    thread,
    time::{Duration, Instant},
};

/// Sends `fd` with a small payload over a connected socket.
pub fn send_fd(stream: &UnixStream, fd: RawFd, payload: &[u8]) -> Result<()> {
    let fds = [fd];
    let message = [ControlMessage::ScmRights(&fds)];
    sendmsg::<()>(
        stream.as_raw_fd(),
        &[IoSlice::new(payload)],
        &message,
        MsgFlags::empty(),
        None,
    )
    .map_err(|e| Error::io("fd passing: sendmsg", e.into()))?;
    Ok(())
}

/// Receives one descriptor and its payload (at most `max_payload` bytes).
pub fn recv_fd(stream: &UnixStream, max_payload: usize) -> Result<(OwnedFd, Vec<u8>)> {
    let mut payload = vec![0u8; max_payload];
    let mut space = nix::cmsg_space!([RawFd; 1]);
    let (received, fd) = {
        let mut iov = [IoSliceMut::new(&mut payload)];
        let message = recvmsg::<()>(
            stream.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::empty(),
        )
        .map_err(|e| Error::io("fd passing: recvmsg", e.into()))?;
        let mut fd = None;
        for cmsg in message
            .cmsgs()
            .map_err(|e| Error::io("fd passing: control message", e.into()))?
        {
            if let ControlMessageOwned::ScmRights(fds) = cmsg {
                fd = fds.first().copied();
            }
        }
        (message.bytes, fd)
    };
    let fd = fd.ok_or_else(|| Error::Store("fd passing: message carried no descriptor".into()))?;
    payload.truncate(received);
    // SAFETY: the kernel just installed this descriptor for us.
    Ok((unsafe { OwnedFd::from_raw_fd(fd) }, payload))
}

fn socket_name(job: &str, rank: usize) -> String {
    format!("symm-{job}-{rank}")
}

#[derive(Default)]
struct Inbox {
    fds: Mutex<HashMap<(String, usize), OwnedFd>>,
    arrived: Condvar,
}

/// This process's end of descriptor exchange within one job.
pub struct FdExchange {
    job: String,
    rank: usize,
    inbox: Arc<Inbox>,
}

impl FdExchange {
    /// Listens as `rank` of `job` (a name shared by all ranks of a run).
    pub fn start(job: &str, rank: usize) -> Result<Self> {
        let address = SocketAddr::from_abstract_name(socket_name(job, rank).as_bytes())
            .map_err(|e| Error::io("fd passing: socket name", e))?;
        let listener = UnixListener::bind_addr(&address)
            .map_err(|e| Error::io("fd passing: cannot listen", e))?;
        let inbox = Arc::new(Inbox::default());
        let sink = Arc::clone(&inbox);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let Ok((fd, payload)) = recv_fd(&stream, 512) else {
                    continue;
                };
                let Some((tag, sender)) = parse_payload(&payload) else {
                    continue;
                };
                let mut fds = sink.fds.lock().unwrap_or_else(|p| p.into_inner());
                fds.insert((tag, sender), fd);
                sink.arrived.notify_all();
            }
        });
        Ok(Self {
            job: job.to_owned(),
            rank,
            inbox,
        })
    }

    /// Sends `fd`, tagged `tag`, to `peer`.
    pub fn send(&self, peer: usize, tag: &str, fd: RawFd) -> Result<()> {
        let address = SocketAddr::from_abstract_name(socket_name(&self.job, peer).as_bytes())
            .map_err(|e| Error::io("fd passing: socket name", e))?;
        let stream = UnixStream::connect_addr(&address)
            .map_err(|e| Error::io(format!("fd passing: cannot reach rank {peer}"), e))?;
        send_fd(&stream, fd, format!("{}\n{tag}", self.rank).as_bytes())
    }

    /// The descriptors tagged `tag` from each of `peers`, waiting up to
    /// `timeout`; the error names the peers that sent nothing.
    pub fn receive(&self, tag: &str, peers: &[usize], timeout: Duration) -> Result<Vec<OwnedFd>> {
        let deadline = Instant::now() + timeout;
        let mut fds = self.inbox.fds.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let missing: Vec<usize> = peers
                .iter()
                .copied()
                .filter(|&peer| !fds.contains_key(&(tag.to_owned(), peer)))
                .collect();
            if missing.is_empty() {
                return Ok(peers
                    .iter()
                    .filter_map(|&peer| fds.remove(&(tag.to_owned(), peer)))
                    .collect());
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Error::RendezvousTimeout {
                    key: format!("fd exchange '{tag}'"),
                    missing,
                    seconds: timeout.as_secs_f64(),
                });
            }
            fds = self
                .inbox
                .arrived
                .wait_timeout(fds, deadline - now)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
}

fn parse_payload(payload: &[u8]) -> Option<(String, usize)> {
    let text = std::str::from_utf8(payload).ok()?;
    let (sender, tag) = text.split_once('\n')?;
    Some((tag.to_owned(), sender.parse().ok()?))
}
