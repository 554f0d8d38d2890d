//! What the application's C ABI (`capi::runtime`) asks of a session:
//! symmetric buffers, all-reduces, graph capture and plain memory, each a
//! method that returns a `Result`.

use super::Session;
use crate::{
    Error, Result,
    cuda::{DeviceBuffer, Graph, check},
    library::{self, Algorithm, Dtype, ReduceOp},
    symmetric::SymmetricBuffer,
};
use cudarc::driver::sys;
use std::ffi::c_void;

/// The ABI codes of an all-reduce: dtype, reduction, algorithm.
pub type AllReduceCodes = [i32; 3];

impl Session {
    /// `bytes` of symmetric memory named `id`, allocated collectively.
    pub fn allocate_symmetric(&mut self, id: &str, bytes: usize) -> Result<SymmetricBuffer> {
        let ordinal = self.device.ordinal;
        SymmetricBuffer::allocate(&mut self.group, ordinal, id, bytes)
    }

    /// All-reduce of `count` elements of `input` into device address `out`
    /// on `stream` (NULL: the runtime's).
    pub fn all_reduce(
        &self,
        input: &SymmetricBuffer,
        out: u64,
        count: usize,
        [dtype, op, algorithm]: AllReduceCodes,
        stream: sys::CUstream,
    ) -> Result<()> {
        let stream = if stream.is_null() {
            self.stream.raw
        } else {
            stream
        };
        self.collectives.all_reduce(
            input,
            out,
            count,
            library::decode(dtype.into(), Dtype::from_code, "dtype")?,
            library::decode(op.into(), ReduceOp::from_code, "reduction")?,
            library::decode(algorithm.into(), Algorithm::from_code, "algorithm")?,
            stream,
        )
    }

    /// Waits for the runtime's stream and reports a peer that never
    /// signalled.
    pub fn synchronize(&self) -> Result<()> {
        self.device.synchronize()?;
        self.collectives.check_peers("a collective")
    }

    /// A graph of what `body` enqueues on the runtime's stream (`body`
    /// gets the stream; nonzero is a failure).
    pub fn capture_graph(&self, body: impl FnOnce(*mut c_void) -> i32) -> Result<Graph> {
        let stream = self.stream.raw.cast();
        Graph::capture(&self.stream, || {
            if body(stream) == 0 {
                Ok(())
            } else {
                Err(Error::Cuda("the capture callback failed".into()))
            }
        })
    }

    /// Starts capturing the runtime's stream.
    pub fn begin_graph(&self) -> Result<()> {
        Graph::begin_capture(&self.stream)
    }

    /// Ends the capture and instantiates the graph.
    pub fn end_graph(&self) -> Result<Graph> {
        Graph::end_capture(&self.stream)
    }

    /// Launches `graph` on the runtime's stream.
    pub fn replay(&self, graph: &Graph) -> Result<()> {
        graph.replay(&self.stream)
    }

    /// Plain device memory the caller owns from here on (freed with
    /// `symm_device_free`).
    pub fn device_alloc(&self, bytes: usize) -> Result<u64> {
        self.device.bind()?;
        let buffer = DeviceBuffer::new(bytes)?;
        let pointer = buffer.ptr;
        std::mem::forget(buffer);
        Ok(pointer)
    }

    /// Pinned, portable host memory the caller owns from here on.
    pub fn host_alloc(&self, bytes: usize) -> Result<*mut c_void> {
        self.device.bind()?;
        let mut pointer = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; portable, so any context sees it.
        check(
            unsafe {
                sys::cuMemHostAlloc(&mut pointer, bytes.max(1), sys::CU_MEMHOSTALLOC_PORTABLE)
            },
            "cuMemHostAlloc",
        )?;
        Ok(pointer)
    }
}
