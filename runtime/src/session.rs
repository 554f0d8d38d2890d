//! One rank's working set: its group, its device, the collectives and a
//! stream of its own, set up in the order the driver needs (the device's
//! context is current before any kernel loads).

use crate::{
    collectives::Collectives,
    compiled::CompiledState,
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

/// The ranks other than `group`'s own whose GPU is this rank's (host name
/// and device UUID, gathered from every rank). The lowest rank of each
/// shared GPU warns once.
fn gpu_sharers(group: &mut Group, device: &Device) -> Result<Vec<usize>> {
    let (rank, world) = (group.rank(), group.world_size());
    let mut id = nix::unistd::gethostname()
        .map(|h| h.to_string_lossy().into_owned().into_bytes())
        .unwrap_or_default();
    id.push(0);
    id.extend_from_slice(&device.uuid()?);
    let ids = group
        .store
        .all_gather("gpu", rank, world, &id, group.config.timeout)?;
    let sharing = same_gpu(&ids, rank);
    if !sharing.is_empty() && sharing.iter().all(|&other| other > rank) {
        let mut ranks = vec![rank];
        ranks.extend(&sharing);
        log::warn!(
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

/// The ranks other than `rank` whose id is `rank`'s.
fn same_gpu(ids: &[Vec<u8>], rank: usize) -> Vec<usize> {
    (0..ids.len())
        .filter(|&other| other != rank && ids[other] == ids[rank])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::same_gpu;

    #[test]
    fn ranks_with_one_gpu_id_share_it() {
        let ids: Vec<Vec<u8>> = [b"h\0a", b"h\0b", b"h\0a", b"g\0a"]
            .iter()
            .map(|id| id.to_vec())
            .collect();
        assert_eq!(same_gpu(&ids, 0), vec![2]);
        assert_eq!(same_gpu(&ids, 2), vec![0]);
        // Another GPU, and the same UUID on another host, share nothing.
        assert!(same_gpu(&ids, 1).is_empty());
        assert!(same_gpu(&ids, 3).is_empty());
    }
}
