//! Joining a group: rank and world size from the torchrun environment
//! (`RANK`, `WORLD_SIZE`, `LOCAL_RANK`, `MASTER_ADDR`, `MASTER_PORT`), a
//! store served by rank 0, and descriptor exchange between the ranks.

use crate::{
    error::{Error, Result},
    fdpass::FdExchange,
    store::{StoreClient, StoreServer},
};
use std::{
    net::{SocketAddr, ToSocketAddrs},
    time::{Duration, SystemTime, UNIX_EPOCH},
};

/// Default for how long a rank waits for its peers.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// Where this process sits in a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupConfig {
    pub rank: usize,
    pub world_size: usize,
    pub local_rank: usize,
    pub store: SocketAddr,
    pub timeout: Duration,
}

fn var(name: &str) -> Result<String> {
    std::env::var(name).map_err(|_| {
        Error::Env(format!(
            "{name} is not set (start ranks with symm-launch or torchrun)"
        ))
    })
}

fn number(name: &str) -> Result<usize> {
    var(name)?
        .parse()
        .map_err(|_| Error::Env(format!("{name} is not a number")))
}

impl GroupConfig {
    /// Single-process mode: `world` threads of one process, one per GPU,
    /// each joining as `rank` through a store at `store` (any free port on
    /// loopback; rank 0 serves it).
    pub fn thread(rank: usize, world: usize, store: SocketAddr) -> Self {
        Self {
            rank,
            world_size: world,
            local_rank: rank,
            store,
            timeout: DEFAULT_TIMEOUT,
        }
    }

    /// Reads the torchrun environment. `SYMM_TIMEOUT_S` overrides the
    /// rendezvous timeout; `SYMM_STORE_PORT`, the store's port (else
    /// `MASTER_PORT`).
    pub fn from_env() -> Result<Self> {
        let rank = number("RANK")?;
        let world_size = number("WORLD_SIZE")?;
        if world_size == 0 || rank >= world_size {
            return Err(Error::Env(format!(
                "RANK {rank} is not below WORLD_SIZE {world_size}"
            )));
        }
        let local_rank = number("LOCAL_RANK").unwrap_or(rank);
        // Under torchrun beside torch.distributed, whose store holds
        // MASTER_PORT, SYMM_STORE_PORT gives ours another.
        let port = match std::env::var("SYMM_STORE_PORT") {
            Ok(port) => port,
            Err(_) => var("MASTER_PORT")?,
        };
        let address = format!("{}:{port}", var("MASTER_ADDR")?);
        let store = address
            .to_socket_addrs()
            .map_err(|e| Error::io(format!("cannot resolve {address}"), e))?
            .next()
            .ok_or_else(|| Error::Env(format!("{address} resolves to nothing")))?;
        let timeout = match std::env::var("SYMM_TIMEOUT_S") {
            Ok(seconds) => Duration::from_secs_f64(
                seconds
                    .parse()
                    .map_err(|_| Error::Env("SYMM_TIMEOUT_S is not a number".into()))?,
            ),
            Err(_) => DEFAULT_TIMEOUT,
        };
        Ok(Self {
            rank,
            world_size,
            local_rank,
            store,
            timeout,
        })
    }
}

/// A joined group.
pub struct Group {
    pub config: GroupConfig,
    /// Whether every rank can map every other rank's GPU memory: all on
    /// one host (one NVLink domain) and `SYMM_FORCE_NCCL` unset.
    pub peer_access: bool,
    /// Every rank's host name, in rank order.
    pub hosts: Vec<Vec<u8>>,
    pub store: StoreClient,
    pub fds: FdExchange,
    /// Kept alive on rank 0.
    _server: Option<StoreServer>,
    /// Liveness probes run so far (`unresponsive_peers`).
    probes: u64,
}

impl Group {
    /// Joins: rank 0 serves the store; everyone agrees on a job name (used
    /// to name the descriptor sockets) and meets at a barrier.
    pub fn join(config: GroupConfig) -> Result<Self> {
        crate::logging::init();
        crate::logging::set_rank(config.rank);
        let started = std::time::Instant::now();
        let server = if config.rank == 0 {
            Some(StoreServer::start(config.store)?)
        } else {
            None
        };
        let mut store = StoreClient::connect(config.store, config.timeout)?;
        if config.rank == 0 {
            let stamp = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0);
            store.set("job", format!("{}-{stamp}", std::process::id()).as_bytes())?;
        }
        let job = String::from_utf8_lossy(&store.get("job", config.timeout)?).into_owned();
        let fds = FdExchange::start(&job, config.rank)?;
        let host = nix::unistd::gethostname()
            .map(|h| h.to_string_lossy().into_owned())
            .unwrap_or_default();
        let hosts = store.all_gather(
            "host",
            config.rank,
            config.world_size,
            host.as_bytes(),
            config.timeout,
        )?;
        let forced = std::env::var("SYMM_FORCE_NCCL").is_ok_and(|v| v == "1");
        let peer_access = !forced && hosts.iter().all(|h| h == host.as_bytes());
        store.barrier("join", config.rank, config.world_size, config.timeout)?;
        tracing::info!(
            "joined group of {} ranks at {} in {:.1} ms; peer access: {}",
            config.world_size,
            config.store,
            started.elapsed().as_secs_f64() * 1e3,
            if peer_access {
                "yes"
            } else if forced {
                "no (SYMM_FORCE_NCCL=1)"
            } else {
                "no (ranks on several hosts)"
            }
        );
        Ok(Self {
            config,
            peer_access,
            hosts,
            store,
            fds,
            _server: server,
            probes: 0,
        })
    }

    /// After a peer wait timed out: which peers do not answer. Each rank
    /// that got here posts itself under a fresh probe key and waits up to
    /// `wait` for the others' keys; those that never post are dead or hung.
    /// When the store itself is gone, its rank (0) is the one named.
    pub fn unresponsive_peers(&mut self, wait: Duration) -> Vec<usize> {
        let probe = self.probes;
        self.probes += 1;
        let rank = self.rank();
        if self
            .store
            .set(&format!("probe/{probe}/{rank}"), b"1")
            .is_err()
        {
            return vec![0];
        }
        let deadline = std::time::Instant::now() + wait;
        self.peers()
            .into_iter()
            .filter(|peer| {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                !matches!(
                    self.store.try_get(&format!("probe/{probe}/{peer}"), left),
                    Ok(Some(_))
                )
            })
            .collect()
    }

    pub fn from_env() -> Result<Self> {
        Self::join(GroupConfig::from_env()?)
    }

    pub fn rank(&self) -> usize {
        self.config.rank
    }

    pub fn world_size(&self) -> usize {
        self.config.world_size
    }

    /// Every rank's `value` under `key`, in rank order, through the store
    /// within the group's timeout (a rank that never publishes is named in
    /// the error).
    pub fn all_gather(&mut self, key: &str, value: &[u8]) -> Result<Vec<Vec<u8>>> {
        let (rank, world, timeout) = (self.rank(), self.world_size(), self.config.timeout);
        self.store.all_gather(key, rank, world, value, timeout)
    }

    pub fn peers(&self) -> Vec<usize> {
        (0..self.world_size())
            .filter(|&r| r != self.rank())
            .collect()
    }
}

impl Drop for Group {
    /// Rank 0 serves the store, so it stays until every rank has left;
    /// bounded by the timeout so a dead peer cannot hold it forever.
    fn drop(&mut self) {
        let Ok(left) = self.store.add("leave", 1) else {
            return;
        };
        if self.config.rank != 0 {
            return;
        }
        let deadline = std::time::Instant::now() + self.config.timeout;
        let mut left = left;
        while left < self.config.world_size as i64 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
            left = self.store.add("leave", 0).unwrap_or(i64::MAX);
        }
    }
}

/// Checks that every rank allocates `bytes` under `id`: all-gathers the
/// sizes and fails on every rank, naming a rank that disagrees, rather than
/// letting a mismatched allocation hang or corrupt memory later.
pub fn agree_on_size(group: &mut Group, id: &str, bytes: u64) -> Result<()> {
    let rank = group.rank();
    let parts = group.all_gather(&format!("size/{id}"), &bytes.to_le_bytes())?;
    for (other, part) in parts.iter().enumerate() {
        let theirs = part
            .as_slice()
            .try_into()
            .map(u64::from_le_bytes)
            .map_err(|_| Error::Store(format!("rank {other} sent a malformed size for '{id}'")))?;
        if theirs != bytes {
            return Err(Error::SizeMismatch {
                id: id.to_owned(),
                rank,
                mine: bytes,
                other,
                theirs,
            });
        }
    }
    Ok(())
}
