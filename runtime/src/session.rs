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
    pub group: Group,
}

impl Session {
    /// On `group`'s local device; `timeout` bounds every wait on a peer in
    /// the kernels. Collective (the NCCL fallback sets up here).
    pub fn new(mut group: Group, timeout: Duration) -> Result<Self> {
        let device = Device::open(group.config.local_rank)?;
        let collectives = Collectives::for_group(&mut group, timeout)?;
        Ok(Self {
            stream: Stream::new()?,
            group,
            device,
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
