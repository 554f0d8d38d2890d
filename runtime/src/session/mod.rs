//! One rank's working set: its group, its device, the collectives and a
//! stream of its own, set up in the order the driver needs (the device's
//! context is current before any kernel loads).

pub mod application;
pub mod compiled;

pub use compiled::CompiledState;

use crate::{
    collectives::Collectives,
    cuda::{Device, Stream},
    error::Result,
    group::Group,
};
use std::time::Duration;

/// Fields drop in declaration order, and that order is the teardown the
/// driver needs: what lives in the device's context (graphs, pools,
/// buffers, streams) goes before the context is released, and the group
/// (sockets, the store) last, after every peer mapping is gone. (Streams
/// destroyed after their context failed with CUDA_ERROR_CONTEXT_IS_DESTROYED
/// at every exit.)
pub struct Session {
    /// Pools and handles of programs compiled by symm-compile.
    pub compiled: CompiledState,
    pub collectives: Collectives,
    pub stream: Stream,
    pub device: Device,
    /// The other ranks that run on this rank's GPU (`symm-launch --gpus`,
    /// or a launcher that gave several ranks one LOCAL_RANK): their
    /// kernels take turns with ours, so every wait on a peer costs a turn.
    pub gpu_sharers: Vec<usize>,
    pub group: Group,
}

impl Session {
    /// On `group`'s local device; `timeout` bounds every wait on a peer in
    /// the kernels. Collective (the NCCL fallback sets up here).
    pub fn new(mut group: Group, timeout: Duration) -> Result<Self> {
        let device = Device::open(group.config.local_rank)?;
        let gpu_sharers = gpu_sharers(&mut group, &device)?;
        let collectives = Collectives::for_group(&mut group, timeout)?;
        Ok(Self {
            stream: Stream::new()?,
            group,
            device,
            gpu_sharers,
            collectives,
            compiled: CompiledState::default(),
        })
    }

    /// Joins the group the launcher describes in the environment, with the
    /// group's own timeout.
    pub fn from_env() -> Result<Self> {
        let group = Group::from_env()?;
        let timeout = group.config.timeout;
        Self::new(group, timeout)
    }
}

/// The ranks other than `group`'s own whose GPU is this rank's (the same
/// host, from the join, and the same device UUID, gathered here). The
/// lowest rank of each shared GPU warns once.
fn gpu_sharers(group: &mut Group, device: &Device) -> Result<Vec<usize>> {
    let rank = group.rank();
    let uuids = group.all_gather("gpu", &device.uuid()?)?;
    let sharing = same_gpu(&group.hosts, &uuids, rank);
    if sharing.first().is_some_and(|&first| first > rank) {
        let mut ranks = vec![rank];
        ranks.extend(&sharing);
        tracing::warn!(
            "ranks {ranks:?} share GPU {} (LOCAL_RANK {}): their kernels take turns on it, so \
             every wait on a peer costs a turn and collectives run orders of magnitude slower. \
             Give each rank its own GPU (LOCAL_RANK, CUDA_VISIBLE_DEVICES) unless this is a \
             check of correctness (symm-launch --gpus)",
            device.ordinal,
            group.config.local_rank
        );
    }
    Ok(sharing)
}

/// The ranks other than `rank` on `rank`'s host with `rank`'s device UUID.
fn same_gpu(hosts: &[Vec<u8>], uuids: &[Vec<u8>], rank: usize) -> Vec<usize> {
    (0..uuids.len())
        .filter(|&other| {
            other != rank && hosts[other] == hosts[rank] && uuids[other] == uuids[rank]
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::same_gpu;

    #[test]
    fn ranks_with_one_gpu_id_share_it() {
        let bytes =
            |ids: [&[u8]; 4]| -> Vec<Vec<u8>> { ids.iter().map(|id| id.to_vec()).collect() };
        let hosts = bytes([b"h", b"h", b"h", b"g"]);
        let uuids = bytes([b"a", b"b", b"a", b"a"]);
        assert_eq!(same_gpu(&hosts, &uuids, 0), vec![2]);
        assert_eq!(same_gpu(&hosts, &uuids, 2), vec![0]);
        // Another GPU, and the same UUID on another host, share nothing.
        assert!(same_gpu(&hosts, &uuids, 1).is_empty());
        assert!(same_gpu(&hosts, &uuids, 3).is_empty());
    }
}
