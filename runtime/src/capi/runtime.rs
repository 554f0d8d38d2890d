//! The C ABI (`include/symm_runtime.h`): group init, symmetric allocation,
//! peer tables, collective launch, CUDA-graph capture. Every call returns 0
//! on success or -1 with the message in `symm_last_error()`; none panics
//! across the boundary.
//!
//! Safety contract of every function (also in the header): handle
//! arguments are NULL or were returned by this library and not yet freed;
//! strings are NUL-terminated; out-pointers point at writable storage.
#![allow(clippy::missing_safety_doc)]

use super::{SymmRuntime, guard, non_null};
use crate::{
    Error,
    abi_types::{GraphStats, SymmCaptureFn, SymmGraph},
    session::Session,
    symmetric::SymmetricBuffer,
};
use std::ffi::{CStr, c_char, c_int, c_void};

/// A NUL-terminated string argument, or why not.
fn text(pointer: *const c_char, what: &str) -> crate::Result<String> {
    if pointer.is_null() {
        return Err(Error::InvalidArgument(format!("{what} is NULL")));
    }
    // SAFETY: a NUL-terminated string from the caller.
    Ok(unsafe { CStr::from_ptr(pointer) }
        .to_string_lossy()
        .into_owned())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_init(out: *mut *mut SymmRuntime) -> c_int {
    guard(|| {
        let out = non_null(out, "out")?;
        *out = Box::into_raw(Box::new(Session::from_env()?));
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_finalize(runtime: *mut SymmRuntime) {
    if !runtime.is_null() {
        // SAFETY: created by symm_init.
        drop(unsafe { Box::from_raw(runtime) });
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rank(runtime: *const SymmRuntime) -> c_int {
    // SAFETY: created by symm_init, or NULL.
    unsafe { runtime.as_ref() }.map_or(-1, |r| r.group.rank() as c_int)
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_world_size(runtime: *const SymmRuntime) -> c_int {
    // SAFETY: created by symm_init, or NULL.
    unsafe { runtime.as_ref() }.map_or(-1, |r| r.group.world_size() as c_int)
}

/// The runtime's own stream (a `CUstream`), for work ordered with its
/// collectives.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_stream(runtime: *const SymmRuntime) -> *mut c_void {
    // SAFETY: created by symm_init, or NULL.
    unsafe { runtime.as_ref() }.map_or(std::ptr::null_mut(), |r| r.stream.raw.cast())
}

/// The first failure since the last check: of an asynchronous compiled
/// call (a module, launch or runtime call that failed), or of a kernel
/// that gave up waiting for a peer and has finished. 0 when there is none;
/// -1 with the message in `symm_last_error()` otherwise, and the failure is
/// cleared, so later calls run again. It does not wait for queued work:
/// `symm_stream_synchronize` does both.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_status(runtime: *mut SymmRuntime) -> c_int {
    guard(|| non_null(runtime, "runtime")?.compiled_status())
}

/// The device's free and total memory, in bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_memory_info(
    runtime: *mut SymmRuntime,
    free: *mut usize,
    total: *mut usize,
) -> c_int {
    guard(|| {
        let runtime = non_null(runtime, "runtime")?;
        let (f, t) = runtime.device.memory_info()?;
        *non_null(free, "free")? = f;
        *non_null(total, "total")? = t;
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_compiled_graph_stats(
    runtime: *mut SymmRuntime,
    out: *mut GraphStats,
) -> c_int {
    guard(|| {
        let runtime = non_null(runtime, "runtime")?;
        *non_null(out, "out")? = runtime.compiled.graph_stats();
        Ok(())
    })
}

/// Waits for the work queued on `stream` (NULL: the runtime's), then
/// reports as `symm_status` does.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_stream_synchronize(
    runtime: *mut SymmRuntime,
    stream: *mut c_void,
) -> c_int {
    guard(|| non_null(runtime, "runtime")?.synchronize_compiled(stream.cast()))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_alloc(
    runtime: *mut SymmRuntime,
    id: *const c_char,
    bytes: usize,
    out: *mut *mut SymmetricBuffer,
) -> c_int {
    guard(|| {
        let runtime = non_null(runtime, "runtime")?;
        let out = non_null(out, "out")?;
        *out = Box::into_raw(Box::new(
            runtime.allocate_symmetric(&text(id, "id")?, bytes)?,
        ));
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_free(buffer: *mut SymmetricBuffer) {
    if !buffer.is_null() {
        // SAFETY: created by symm_alloc.
        drop(unsafe { Box::from_raw(buffer) });
    }
}

/// Device address of rank `peer`'s copy, mapped here; 0 if out of range.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_buffer_ptr(buffer: *const SymmetricBuffer, peer: c_int) -> u64 {
    // SAFETY: created by symm_alloc, or NULL.
    unsafe { buffer.as_ref() }
        .and_then(|b| usize::try_from(peer).ok().and_then(|p| b.peer(p)))
        .unwrap_or(0)
}

/// Device tables of every rank's buffer and signal-pad addresses (u64 each).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_buffer_peer_tables(
    buffer: *const SymmetricBuffer,
    buffers: *mut u64,
    pads: *mut u64,
) -> c_int {
    guard(|| {
        // SAFETY: created by symm_alloc, or NULL.
        let buffer = unsafe { buffer.as_ref() }
            .ok_or_else(|| Error::InvalidArgument("buffer is NULL".into()))?;
        *non_null(buffers, "buffers")? = buffer.buffer_table.ptr;
        *non_null(pads, "pads")? = buffer.pad_table.ptr;
        Ok(())
    })
}

/// All-reduce of `count` elements of `input` into `out` (a device address)
/// on `stream` (NULL: the runtime's stream).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn symm_all_reduce(
    runtime: *mut SymmRuntime,
    input: *const SymmetricBuffer,
    out: u64,
    count: usize,
    dtype_code: c_int,
    op_code: c_int,
    algorithm_code: c_int,
    stream: *mut c_void,
) -> c_int {
    guard(|| {
        let runtime = non_null(runtime, "runtime")?;
        let input = non_null(input.cast_mut(), "input")?;
        let codes = [dtype_code, op_code, algorithm_code];
        runtime.all_reduce(input, out, count, codes, stream.cast())
    })
}

/// Waits for the runtime's stream and reports a peer that never signalled.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_synchronize(runtime: *mut SymmRuntime) -> c_int {
    guard(|| non_null(runtime, "runtime")?.synchronize())
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_graph_capture(
    runtime: *mut SymmRuntime,
    body: Option<SymmCaptureFn>,
    user: *mut c_void,
    out: *mut *mut SymmGraph,
) -> c_int {
    guard(|| {
        let runtime = non_null(runtime, "runtime")?;
        let out = non_null(out, "out")?;
        let body = body.ok_or_else(|| Error::InvalidArgument("body is NULL".into()))?;
        *out = Box::into_raw(Box::new(SymmGraph(
            runtime.capture_graph(|stream| body(user, stream))?,
        )));
        Ok(())
    })
}

/// Starts capturing the runtime's stream into a graph; every collective
/// launched on it until `symm_graph_end` is recorded, not run.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_graph_begin(runtime: *mut SymmRuntime) -> c_int {
    guard(|| non_null(runtime, "runtime")?.begin_graph())
}

/// Ends the capture and instantiates the graph.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_graph_end(
    runtime: *mut SymmRuntime,
    out: *mut *mut SymmGraph,
) -> c_int {
    guard(|| {
        let runtime = non_null(runtime, "runtime")?;
        let out = non_null(out, "out")?;
        *out = Box::into_raw(Box::new(SymmGraph(runtime.end_graph()?)));
        Ok(())
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_graph_replay(
    runtime: *mut SymmRuntime,
    graph: *mut SymmGraph,
) -> c_int {
    guard(|| non_null(runtime, "runtime")?.replay(&non_null(graph, "graph")?.0))
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_graph_free(graph: *mut SymmGraph) {
    if !graph.is_null() {
        // SAFETY: created by symm_graph_capture.
        drop(unsafe { Box::from_raw(graph) });
    }
}

/// Plain device memory for applications without the CUDA toolkit (out
/// buffers, inputs); 0 on failure.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_device_alloc(runtime: *mut SymmRuntime, bytes: usize) -> u64 {
    let mut pointer = 0;
    guard(|| {
        pointer = non_null(runtime, "runtime")?.device_alloc(bytes)?;
        Ok(())
    });
    pointer
}

/// Pinned (page-locked) host memory, which compiled functions take for
/// their `#cudagraph.host` memrefs; NULL on failure.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_host_alloc(runtime: *mut SymmRuntime, bytes: usize) -> *mut c_void {
    let mut pointer = std::ptr::null_mut();
    guard(|| {
        pointer = non_null(runtime, "runtime")?.host_alloc(bytes)?;
        Ok(())
    });
    pointer
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_host_free(pointer: *mut c_void) {
    if !pointer.is_null() {
        // SAFETY: from symm_host_alloc.
        unsafe {
            cudarc::driver::sys::cuMemFreeHost(pointer);
        }
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_device_free(pointer: u64) {
    if pointer != 0 {
        // SAFETY: from symm_device_alloc.
        unsafe {
            cudarc::driver::sys::cuMemFree_v2(pointer);
        }
    }
}

/// Copies `bytes` from host memory to a device address.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_copy_to_device(dst: u64, src: *const c_void, bytes: usize) -> c_int {
    guard(|| {
        if src.is_null() {
            return Err(Error::InvalidArgument("src is NULL".into()));
        }
        // SAFETY: the caller passes `bytes` readable bytes at `src`.
        let slice = unsafe { std::slice::from_raw_parts(src.cast::<u8>(), bytes) };
        crate::cuda::copy_to_device(dst, slice)
    })
}

/// Copies `bytes` from a device address to host memory.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_copy_to_host(dst: *mut c_void, src: u64, bytes: usize) -> c_int {
    guard(|| {
        if dst.is_null() {
            return Err(Error::InvalidArgument("dst is NULL".into()));
        }
        let data: Vec<u8> = crate::cuda::copy_from_device(src, bytes)?;
        // SAFETY: the caller passes `bytes` writable bytes at `dst`.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst.cast::<u8>(), bytes) };
        Ok(())
    })
}
