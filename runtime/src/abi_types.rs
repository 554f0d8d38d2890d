//! The types of the C ABI (`include/symm_runtime.h`) that are not opaque
//! handles to Rust values: what crosses the boundary by value, and the
//! callback type.

use crate::cuda::Graph;
use std::ffi::{c_int, c_void};

/// The CUDA graphs of compiled partitions since `symm_init`
/// (`symm_graph_stats` in the header).
#[repr(C)]
#[derive(Default)]
pub struct GraphStats {
    pub captures: u64,
    pub replays: u64,
    /// Buffers the partitions' keys own, and their bytes.
    pub buffers: u64,
    pub buffer_bytes: u64,
    /// Of those, buffers inside a symmetric pool: always 0 (P2P buffers
    /// reach partitions as arguments and are never a graph's), counted by
    /// address so a test can prove it.
    pub symmetric_buffers: u64,
}

/// A captured graph; `symm_graph_capture` records what the callback
/// enqueues on the runtime's stream.
pub struct SymmGraph(pub Graph);

pub type SymmCaptureFn = extern "C" fn(user: *mut c_void, stream: *mut c_void) -> c_int;
