//! The ABI that programs compiled by `symm-compile` call (`symm_rt_*`,
//! emitted by `convert-symm-mem-to-runtime`). Every entry point takes the
//! `symm_runtime*` that the application passed to the compiled function.
//!
//! A failure here (a size that differs across ranks, a peer that never
//! signals, an exhausted device) goes through `compiled_call`: the rest of
//! the call is skipped, the asynchronous entry point returns -1 (the
//! message waits for `symm_status`), the synchronizing one prints it and
//! exits with status 1. Nothing runs on with a null pointer or bad data.

#![allow(clippy::missing_safety_doc)]

use crate::{
    Error, Result,
    agmm::{AllGatherMatmul, Matmul, Shard, Strided},
    capi::SymmRuntime,
    compiled_call,
    cuda::{CUdeviceptr, CUstream, DeviceBuffer, Graph, MemPool, Stream, check},
    function_graphs::{FunctionGraphCache, Step},
    library::{self, Dtype},
    mgpu,
    symmetric::SymmetricBuffer,
};
use cudarc::driver::sys;
use std::{
    collections::HashMap,
    ffi::c_void,
    panic::{AssertUnwindSafe, catch_unwind},
};

/// What compiled programs hold on to between calls: the persistent pools
/// (`symm_mem.global`), created on first use, and the matmul machinery.
#[derive(Default)]
pub struct CompiledState {
    globals: HashMap<i64, Pool>,
    agmm: Option<AllGatherMatmul>,
    gathered: Option<DeviceBuffer>,
    /// Scratch buffers outgrown, kept: graphs recorded their addresses.
    retired: Vec<DeviceBuffer>,
    /// Temporaries (`symm_rt_alloc`), kept across calls.
    temporaries: Option<MemPool>,
    /// CUDA graphs of the compiled partitions (`symm_rt_graph_begin/end`)
    /// and the buffers each key owns (`symm_rt_graph_buffer`).
    graphs: FunctionGraphCache<Graph, DeviceBuffer>,
    /// The application's stream of the asynchronous call in flight.
    call_stream: Option<Stream>,
    /// The first failure of an asynchronous call that `symm_status` has
    /// not reported yet; until it has, later calls do not run.
    pub(crate) status: Option<String>,
    /// Token counts every rank has been seen to call with.
    agreed_tokens: std::collections::BTreeSet<i64>,
    /// Generated kernel or library, per matmul site and row count.
    kernels: crate::kernel_choice::KernelChoices,
}

impl Drop for CompiledState {
    fn drop(&mut self) {
        let (captures, replays) = (self.graphs.captures(), self.graphs.replays());
        if captures > 0 {
            log::info!("CUDA graphs of compiled functions: {captures} captured, {replays} replays");
        }
    }
}

/// A persistent pool and the device address of its descriptor
/// (`symm_protocol::Descriptor`), which compiled kernels read the pool's
/// tables and staging layout from.
struct Pool {
    buffer: SymmetricBuffer,
    descriptor: CUdeviceptr,
}

impl Pool {
    fn new(buffer: SymmetricBuffer, collectives: &crate::collectives::Collectives) -> Result<Self> {
        let descriptor = collectives.descriptor(&buffer)?;
        Ok(Self { buffer, descriptor })
    }
}

impl CompiledState {
    /// The pool that holds device address `pointer`, and its offset there.
    fn containing(&self, pointer: CUdeviceptr) -> Result<(&Pool, usize)> {
        self.globals
            .values()
            .find(|p| {
                let b = &p.buffer;
                (b.local()..b.local() + b.bytes.max(1) as u64).contains(&pointer)
            })
            .map(|p| (p, (pointer - p.buffer.local()) as usize))
            .ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "{pointer:#x} is not in a symmetric pool of this program"
                ))
            })
    }
}

impl CompiledState {
    /// What `symm_compiled_graph_stats` reports.
    pub fn graph_stats(&self) -> crate::capi::GraphStats {
        let mut stats = crate::capi::GraphStats {
            captures: self.graphs.captures(),
            replays: self.graphs.replays(),
            ..Default::default()
        };
        for buffer in self.graphs.buffers() {
            stats.buffers += 1;
            stats.buffer_bytes += buffer.bytes as u64;
            let end = buffer.ptr + buffer.bytes.max(1) as u64;
            let symmetric = self.globals.values().any(|pool| {
                let start = pool.buffer.local();
                buffer.ptr < start + pool.buffer.bytes.max(1) as u64 && start < end
            });
            stats.symmetric_buffers += u64::from(symmetric);
        }
        stats
    }
}

/// What an entry point returns when the call has failed and its body is
/// skipped: nothing that a caller could use by mistake.
trait Inert {
    fn inert() -> Self;
}
impl Inert for () {
    fn inert() -> Self {}
}
impl Inert for i32 {
    fn inert() -> Self {
        0
    }
}
impl Inert for i64 {
    fn inert() -> Self {
        0
    }
}
impl Inert for *mut c_void {
    fn inert() -> Self {
        std::ptr::null_mut()
    }
}

impl SymmRuntime {
    /// The first failure since the last check, of an asynchronous compiled
    /// call or of a finished kernel that gave up waiting for a peer; the
    /// failure is cleared, so later calls run again (`symm_status`).
    pub fn compiled_status(&mut self) -> Result<()> {
        if let Some(failure) = self.compiled.status.take() {
            return Err(Error::CallFailed(failure));
        }
        self.check_peers_naming("an asynchronous compiled call")
    }

    /// `Collectives::check_peers`, and on a timeout the peers that do not
    /// answer a liveness probe through the store, by rank.
    pub fn check_peers_naming(&mut self, what: &str) -> Result<()> {
        match self.collectives.check_peers(what) {
            Err(Error::PeerTimeout { what, seconds }) => {
                let wait = self
                    .group
                    .config
                    .timeout
                    .min(std::time::Duration::from_secs(1));
                let silent = self.group.unresponsive_peers(wait);
                let named = match silent.as_slice() {
                    [] => "every peer answers the store now (a peer was late)".to_owned(),
                    [one] => format!("rank {one} is dead or hung"),
                    many => format!(
                        "ranks {} are dead or hung",
                        many.iter()
                            .map(usize::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                };
                Err(Error::PeerTimeout {
                    what: format!("{what}; {named}"),
                    seconds,
                })
            }
            other => other,
        }
    }

    /// Waits for `stream` (NULL: the runtime's), then reports as
    /// `compiled_status` does (`symm_stream_synchronize`).
    pub fn synchronize_compiled(&mut self, stream: *mut c_void) -> Result<()> {
        self.device.bind()?;
        let raw = if stream.is_null() {
            self.stream.raw
        } else {
            stream.cast()
        };
        Stream::borrowed(raw).synchronize()?;
        self.compiled_status()
    }
}

/// Runs `body` unless the call has failed already; an error or a panic is
/// recorded as the call's failure (see `compiled_call`).
fn run<T: Inert>(what: &str, body: impl FnOnce() -> Result<T>) -> T {
    if compiled_call::has_failed() {
        return T::inert();
    }
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(value)) => value,
        Ok(Err(error)) => {
            let message = error.to_string();
            let own = error.driver_status();
            compiled_call::failed(what, &crate::cuda::with_context_error(message, own));
            T::inert()
        }
        Err(_) => {
            compiled_call::failed(what, "internal error: the symm runtime panicked");
            T::inert()
        }
    }
}

/// The stream the running compiled call enqueues on: the application's
/// for an asynchronous call given one, else the runtime's.
fn active_stream(session: &SymmRuntime) -> Stream {
    let raw = session
        .compiled
        .call_stream
        .as_ref()
        .map_or(session.stream.raw, |stream| stream.raw);
    Stream::borrowed(raw)
}

fn session<'a>(runtime: *mut SymmRuntime) -> Result<&'a mut SymmRuntime> {
    // SAFETY: the compiled function passes the handle its caller gave it.
    unsafe { runtime.as_mut() }.ok_or_else(|| {
        Error::InvalidArgument("the symm_runtime* passed to the compiled function is NULL".into())
    })
}

fn size(value: i64, what: &str) -> Result<usize> {
    usize::try_from(value).map_err(|_| Error::InvalidArgument(format!("{what} is {value}")))
}

/// Starts a call of a compiled function's asynchronous entry point: its
/// work goes on `stream` (NULL: the runtime's), in order, without a
/// synchronize. After a failure that `symm_status` has not reported, the
/// call fails at once and runs nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_enter_async(runtime: *mut SymmRuntime, stream: *mut c_void) {
    compiled_call::begin();
    run("entering a compiled function", || {
        let session = session(runtime)?;
        if let Some(earlier) = &session.compiled.status {
            return Err(Error::InvalidArgument(format!(
                "an earlier asynchronous call failed and symm_status has not reported it yet \
                 ({earlier})"
            )));
        }
        session.device.bind()?;
        let stream = if stream.is_null() {
            None
        } else {
            Some(Stream::borrowed(stream.cast()))
        };
        session.compiled.call_stream = stream;
        mgpu::set_current_stream(active_stream(session).raw);
        Ok(())
    })
}

/// Ends an asynchronous call: 0, or -1 when something in it failed (the
/// message is kept for `symm_status` and is `symm_last_error()` now).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_exit_async(runtime: *mut SymmRuntime) -> i32 {
    let failure = compiled_call::end();
    let outermost = !compiled_call::in_call();
    // SAFETY: the compiled function passes the handle its caller gave it.
    let mut session = unsafe { runtime.as_mut() };
    if outermost {
        mgpu::set_current_stream(std::ptr::null_mut());
        if let Some(session) = session.as_deref_mut() {
            session.compiled.call_stream = None;
        }
    }
    let Some(failure) = failure else {
        return 0;
    };
    if let Some(session) = session {
        session
            .compiled
            .status
            .get_or_insert_with(|| failure.clone());
    }
    crate::capi::set_last_error(&failure);
    -1
}

/// Ends a call of a synchronizing entry point, after its asynchronous body
/// returned: waits for its work, and exits the process with the message if
/// anything in it failed or a peer never signalled. Under the
/// application's own graph capture (`symm_graph_begin`) nothing ran yet,
/// so it does not wait; `symm_synchronize` after a replay does the check.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_exit(runtime: *mut SymmRuntime) {
    let outcome = catch_unwind(AssertUnwindSafe(|| -> Result<()> {
        let session = session(runtime)?;
        if let Some(failure) = session.compiled.status.take() {
            return Err(Error::CallFailed(failure));
        }
        if session.stream.is_capturing()? {
            return Ok(());
        }
        session.stream.synchronize()?;
        session.check_peers_naming("a compiled collective")
    }));
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(error)) => compiled_call::fatal("a compiled function", &error.to_string()),
        Err(_) => compiled_call::fatal(
            "a compiled function",
            "internal error: the symm runtime panicked",
        ),
    }
}

/// Whether compiled functions may become CUDA graphs: unless the
/// environment sets `SYMM_CUDA_GRAPHS=0` (to debug, or around code a
/// capture cannot hold).
fn graphs_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("SYMM_CUDA_GRAPHS").map_or(true, |v| v != "0"))
}

/// Starts a run of a compiled partition (`function`: the address of a
/// marker the compiler emits for it; a whole function is one partition)
/// with its `count` arguments at `arguments`, the key of its graph and
/// buffers. Returns 1 when the body must run (eagerly, or under a capture
/// that `symm_rt_graph_end` finishes), 0 when a graph of an earlier run
/// with the same arguments was replayed instead.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_graph_begin(
    runtime: *mut SymmRuntime,
    function: *mut c_void,
    arguments: *const i64,
    count: i64,
) -> i32 {
    run("starting a compiled partition's CUDA graph", || {
        let session = session(runtime)?;
        let stream = active_stream(session);
        // The application may be capturing this call itself.
        let app_capturing = stream.is_capturing()?;
        let may_capture = graphs_enabled() && !app_capturing;
        let count = size(count, "the argument count")?;
        let key: Vec<u64> = if count == 0 || arguments.is_null() {
            Vec::new()
        } else {
            // SAFETY: the compiled function passes `count` i64s it stored.
            unsafe { std::slice::from_raw_parts(arguments, count) }
                .iter()
                .map(|&a| a as u64)
                .collect()
        };
        let id = function as u64;
        let stepped = session.compiled.graphs.step(id, &key, may_capture);
        if !stepped.evicted.is_empty() {
            // Buffers of a key forgotten: queued work may still use them,
            // so they go after a synchronize (kept to the end under the
            // application's capture, which a synchronize would break).
            if app_capturing {
                session.compiled.retired.extend(stepped.evicted);
            } else {
                session.device.synchronize()?;
                drop(stepped.evicted);
            }
        }
        match stepped.step {
            Step::Run => {
                log::debug!("compiled partition {id:#x}: eager run");
                Ok(1)
            }
            Step::Capture => {
                log::info!(
                    "compiled partition {id:#x}: capturing a CUDA graph ({} graphs captured so far)",
                    session.compiled.graphs.captures()
                );
                Graph::begin_capture(&stream)?;
                Ok(1)
            }
            Step::Replay(index) => {
                log::debug!("compiled partition {id:#x}: replaying graph {index}");
                let graph =
                    session.compiled.graphs.graph(id, index).ok_or_else(|| {
                        Error::InvalidArgument("a cached graph disappeared".into())
                    })?;
                graph.replay(&stream)?;
                Ok(0)
            }
        }
    })
}

/// Buffer `index` (`bytes` bytes) of the run of partition `function` in
/// progress: allocated on the first run with these arguments, then the
/// same address for the capture and every replay (a graph holds on to the
/// addresses it recorded). The buffer lives as long as the key's graph;
/// the compiled program never frees it. Plain device memory, never a
/// symmetric pool: P2P buffers reach a partition as its arguments.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_graph_buffer(
    runtime: *mut SymmRuntime,
    function: *mut c_void,
    index: i64,
    bytes: i64,
) -> *mut c_void {
    run("allocating a partition's buffer", || {
        let session = session(runtime)?;
        let index = size(index, "the buffer index")?;
        let bytes = size(bytes, "the buffer size")?;
        let capturing = active_stream(session).is_capturing()?;
        let buffer = session.compiled.graphs.buffer(
            function as u64,
            index,
            bytes,
            |buffer| buffer.bytes,
            |bytes| {
                log::debug!("partition buffer #{index}: {bytes} B");
                if capturing {
                    // Under the application's own capture (thread-local
                    // mode), an allocation must say it is not captured.
                    crate::cuda::outside_capture(|| DeviceBuffer::new(bytes))
                } else {
                    DeviceBuffer::new(bytes)
                }
            },
        )?;
        let buffer = buffer.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "partition buffer #{index} of {bytes} B: no run of its partition is in \
                 progress, or the same arguments asked for another size before"
            ))
        })?;
        Ok(buffer.ptr as *mut c_void)
    })
}

/// Ends the body of a compiled function: when it ran under capture, the
/// graph is instantiated, kept for later calls and launched now. It runs
/// even after a failure in the body, to end the capture; that graph is
/// dropped, not kept.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_graph_end(runtime: *mut SymmRuntime, function: *mut c_void) {
    let body_failed = compiled_call::has_failed();
    let finish = || -> Result<()> {
        let session = session(runtime)?;
        let id = function as u64;
        if !session.compiled.graphs.capturing(id) {
            return Ok(());
        }
        let stream = active_stream(session);
        let graph = match Graph::end_capture(&stream) {
            Ok(graph) => graph,
            Err(error) => {
                session.compiled.graphs.abandon(id);
                return Err(
                    error.hinted("set SYMM_CUDA_GRAPHS=0 to run compiled functions without graphs")
                );
            }
        };
        if body_failed {
            drop(graph);
            session.compiled.graphs.abandon(id);
            return Ok(());
        }
        let graph = session
            .compiled
            .graphs
            .captured(id, graph)
            .ok_or_else(|| Error::InvalidArgument("no capture to finish".into()))?;
        graph.replay(&stream)
    };
    match catch_unwind(AssertUnwindSafe(finish)) {
        Ok(Ok(())) => {}
        Ok(Err(error)) => compiled_call::failed(
            "capturing a compiled function into a CUDA graph",
            &error.to_string(),
        ),
        Err(_) => compiled_call::failed(
            "capturing a compiled function into a CUDA graph",
            "internal error: the symm runtime panicked",
        ),
    }
}

/// The local address of persistent symmetric pool `id` of `bytes` bytes,
/// allocated collectively on first use (every rank must agree on the size).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_global(
    runtime: *mut SymmRuntime,
    id: i64,
    bytes: i64,
) -> *mut c_void {
    run("allocating a symmetric pool", || {
        let session = session(runtime)?;
        let bytes = size(bytes, "the pool size")?;
        if let Some(Pool { buffer, .. }) = session.compiled.globals.get(&id) {
            // Two objects may name a pool alike; a smaller one must not be
            // handed out for a larger request.
            if buffer.bytes < bytes {
                return Err(Error::InvalidArgument(format!(
                    "pool {id:016x} was created with {} bytes, now {bytes} are asked for",
                    buffer.bytes
                )));
            }
            return Ok(buffer.local() as *mut c_void);
        }
        let name = format!("compiled/{id:016x}");
        let device = session.device.ordinal;
        let buffer = SymmetricBuffer::allocate(&mut session.group, device, &name, bytes)?;
        if !buffer.p2p {
            return Err(Error::InvalidArgument(
                "compiled collectives need peer access between all ranks (one NVLink domain)"
                    .into(),
            ));
        }
        let local = buffer.local();
        let pool = Pool::new(buffer, &session.collectives)?;
        session.compiled.globals.insert(id, pool);
        log::info!("compiled program's symmetric pool {id:016x}: {bytes} B");
        Ok(local as *mut c_void)
    })
}

/// The descriptor (device memory, `symm_protocol::Descriptor` words) of
/// the pool holding `pointer`: its peer and pad tables, staging layout and
/// call counters, all that a compiled collective's kernel reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_pool_descriptor(
    runtime: *mut SymmRuntime,
    pointer: *mut c_void,
) -> *mut c_void {
    run("finding a collective's pool", || {
        let (pool, _) = session(runtime)?
            .compiled
            .containing(pointer as CUdeviceptr)?;
        Ok(pool.descriptor as *mut c_void)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_rank(runtime: *mut SymmRuntime) -> i32 {
    run("reading the rank", || {
        Ok(session(runtime)?.group.rank() as i32)
    })
}

/// Checks that the program was compiled for this many ranks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_check_world(runtime: *mut SymmRuntime, world: i64) {
    run("checking the world size", || {
        let actual = session(runtime)?.group.world_size();
        if actual as i64 != world {
            return Err(Error::InvalidArgument(format!(
                "the program was compiled for {world} ranks but runs on {actual}"
            )));
        }
        Ok(())
    })
}

/// Checks a call's token count (the leading size of its dynamic memrefs)
/// against the largest the program was compiled for
/// (`symm_mem.max_tokens`): pools and buffers are sized for that many.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_check_tokens(runtime: *mut SymmRuntime, tokens: i64, max: i64) {
    run("checking the token count", || {
        let session = session(runtime)?;
        if tokens < 1 || tokens > max {
            return Err(Error::InvalidArgument(format!(
                "the call has {tokens} tokens (the leading size of its dynamic memrefs); the \
                 program takes 1 to {max} (its symm_mem.max_tokens)"
            )));
        }
        // Every rank must pass the same count: the first call with each
        // count compares it across ranks (once; later calls cost nothing).
        if !session.compiled.agreed_tokens.contains(&tokens) {
            let check = session.compiled.agreed_tokens.len();
            let id = format!("compiled-tokens/{check}");
            crate::group::agree_on_size(&mut session.group, &id, tokens as u64).map_err(
                |error| match error {
                    Error::SizeMismatch { other, theirs, .. } => Error::InvalidArgument(format!(
                        "this rank calls with {tokens} tokens, rank {other} with {theirs}: every \
                         rank must pass the same token count"
                    )),
                    other => other,
                },
            )?;
            session.compiled.agreed_tokens.insert(tokens);
        }
        Ok(())
    })
}

/// Regular device memory, ordered on the runtime's stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_alloc(runtime: *mut SymmRuntime, bytes: i64) -> *mut c_void {
    run("allocating device memory", || {
        let session = session(runtime)?;
        let bytes = size(bytes, "the allocation size")?.max(1);
        if session.compiled.temporaries.is_none() {
            session.compiled.temporaries = Some(MemPool::new(session.device.ordinal)?);
        }
        let pool = session
            .compiled
            .temporaries
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("no pool for temporaries".into()))?;
        Ok(pool.alloc(bytes, &active_stream(session))? as *mut c_void)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_free(runtime: *mut SymmRuntime, pointer: *mut c_void) {
    run("freeing device memory", || {
        let session = session(runtime)?;
        // SAFETY: memory from symm_rt_alloc; freed after queued work.
        check(
            unsafe { sys::cuMemFreeAsync(pointer as CUdeviceptr, active_stream(session).raw) },
            "cuMemFreeAsync",
        )
    })
}

/// `bytes` from `src` to `dst` on the stream: device memory, or host
/// memory (`#cudagraph.host`, which the application passes in; pinned for
/// an asynchronous copy) on either side.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_copy(
    runtime: *mut SymmRuntime,
    dst: *mut c_void,
    src: *mut c_void,
    bytes: i64,
) {
    run("copying memory", || {
        let session = session(runtime)?;
        let bytes = size(bytes, "the copy size")?;
        // SAFETY: buffers of at least `bytes`, by the lowering; unified
        // addressing tells host from device.
        check(
            unsafe {
                sys::cuMemcpyAsync(
                    dst as CUdeviceptr,
                    src as CUdeviceptr,
                    bytes,
                    active_stream(session).raw,
                )
            },
            "cuMemcpyAsync",
        )
    })
}

/// Waits until the call's work so far is done, so that the host may read
/// what a copy into host memory brought (a fallback region between CUDA
/// graph partitions). Under the application's own capture nothing has
/// run, so the host would read stale data: that is an error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_host_wait(runtime: *mut SymmRuntime) {
    run("waiting for device results the host reads", || {
        let session = session(runtime)?;
        let stream = active_stream(session);
        if stream.is_capturing()? {
            return Err(Error::InvalidArgument(
                "this compiled function reads device results on the host (a copy into \
                 #cudagraph.host memory), which cannot happen inside the application's own \
                 graph capture; call it outside symm_graph_begin/end"
                    .into(),
            ));
        }
        stream.synchronize()
    })
}

/// `c += a @ b` (linalg.matmul; `c = a @ b` when `accumulate` is 0, a
/// zero fill folded in) for row-major device matrices: a is m x k, b is
/// k x n, c is m x n, of dtype code `dtype` (0 f32, 1 f16, 2 bf16).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn symm_rt_matmul(
    runtime: *mut SymmRuntime,
    a: *mut c_void,
    b: *mut c_void,
    c: *mut c_void,
    m: i64,
    n: i64,
    k: i64,
    dtype_code: i32,
    accumulate: i32,
) {
    run("a matmul", || {
        with_matmul(runtime, [m, n, k], dtype_code, accumulate, |call| {
            let operands = [a as CUdeviceptr, b as CUdeviceptr, c as CUdeviceptr];
            call.matmul
                .gemm(call.dtype, operands, call.shape, call.beta, call.stream)
        })
    })
}

/// What a matmul call of the ABI decodes: cuBLAS, dtype, (m, k, n), beta
/// and the active stream.
struct MatmulCall<'s> {
    matmul: &'s Matmul,
    dtype: Dtype,
    shape: (usize, usize, usize),
    beta: f32,
    stream: CUstream,
}

/// Decodes the arguments `symm_rt_matmul` and `symm_rt_matmul_pair` share
/// (sizes `[m, n, k]`, dtype code, accumulate) and runs `body` with them.
fn with_matmul(
    runtime: *mut SymmRuntime,
    [m, n, k]: [i64; 3],
    dtype_code: i32,
    accumulate: i32,
    body: impl FnOnce(MatmulCall) -> Result<()>,
) -> Result<()> {
    let session = session(runtime)?;
    let shape = (size(m, "m")?, size(k, "k")?, size(n, "n")?);
    let dtype = library::decode(dtype_code.into(), Dtype::from_code, "dtype")?;
    let stream = active_stream(session).raw;
    let agmm = agmm(session)?;
    body(MatmulCall {
        matmul: &agmm.matmul,
        dtype,
        shape,
        // linalg.matmul adds to c; with a zero fill folded in it overwrites.
        beta: if accumulate != 0 { 1.0 } else { 0.0 },
        stream,
    })
}

/// `c0 (+)= a @ b0` and `c1 (+)= a @ b1`, shapes and codes as
/// `symm_rt_matmul`'s: two matmuls sharing their left operand (a gate and
/// an up projection), one batched GEMM where the addresses allow it.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn symm_rt_matmul_pair(
    runtime: *mut SymmRuntime,
    a: *mut c_void,
    b0: *mut c_void,
    c0: *mut c_void,
    b1: *mut c_void,
    c1: *mut c_void,
    m: i64,
    n: i64,
    k: i64,
    dtype_code: i32,
    accumulate: i32,
) {
    run("a matmul pair", || {
        with_matmul(runtime, [m, n, k], dtype_code, accumulate, |call| {
            let first = [b0 as CUdeviceptr, c0 as CUdeviceptr];
            let second = [b1 as CUdeviceptr, c1 as CUdeviceptr];
            call.matmul.gemm_pair(
                call.dtype,
                a as CUdeviceptr,
                first,
                second,
                call.shape,
                call.beta,
                call.stream,
            )
        })
    })
}

/// `c_i (+)= a_i @ b_i` for `i < batch` (linalg.batch_matmul, a split-K
/// GEMM's slices): row-major matrices, a_i m x k, b_i k x n, c_i m x n,
/// each with its row stride and batch stride in elements; the inputs of
/// dtype code `in_code`, the output of `out_code` (the same, or f32).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn symm_rt_batch_matmul(
    runtime: *mut SymmRuntime,
    a: *mut c_void,
    b: *mut c_void,
    c: *mut c_void,
    batch: i64,
    m: i64,
    n: i64,
    k: i64,
    lda: i64,
    stride_a: i64,
    ldb: i64,
    stride_b: i64,
    ldc: i64,
    stride_c: i64,
    in_code: i32,
    out_code: i32,
    accumulate: i32,
) {
    run("a batched matmul", || {
        with_matmul(runtime, [m, n, k], in_code, accumulate, |call| {
            let out = library::decode(out_code.into(), Dtype::from_code, "output dtype")?;
            let operand = |ptr: *mut c_void, ld: i64, batch_stride: i64, dtype| {
                Ok::<_, Error>(Strided {
                    ptr: ptr as CUdeviceptr,
                    dtype,
                    ld: size(ld, "a row stride")?,
                    batch_stride: size(batch_stride, "a batch stride")? as i64,
                })
            };
            let batch = i32::try_from(size(batch, "the batch")?).map_err(|_| {
                Error::InvalidArgument(format!("a batch of {batch} is too large for cuBLAS"))
            })?;
            call.matmul.gemm_strided(
                [
                    operand(a, lda, stride_a, call.dtype)?,
                    operand(b, ldb, stride_b, call.dtype)?,
                    operand(c, ldc, stride_c, out)?,
                ],
                batch,
                call.shape,
                call.beta,
                call.stream,
            )
        })
    })
}

fn agmm(session: &mut SymmRuntime) -> Result<&AllGatherMatmul> {
    let world = session.group.world_size();
    if session.compiled.agmm.is_none() {
        session.compiled.agmm = Some(AllGatherMatmul::new(world)?);
    }
    session
        .compiled
        .agmm
        .as_ref()
        .ok_or_else(|| Error::InvalidArgument("no all-gather matmul state".into()))
}

/// `c = all_gather(a) @ b`: a (m x k, in a symmetric pool) is this rank's
/// row shard, b is k x n, c is (W*m) x n.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn symm_rt_all_gather_matmul(
    runtime: *mut SymmRuntime,
    a: *mut c_void,
    b: *mut c_void,
    c: *mut c_void,
    m: i64,
    k: i64,
    n: i64,
    dtype_code: i32,
) {
    run("all_gather_matmul", || {
        let session = session(runtime)?;
        let shape = (size(m, "m")?, size(k, "k")?, size(n, "n")?);
        let dtype = library::decode(dtype_code.into(), Dtype::from_code, "dtype")?;
        let gathered_bytes = session.group.world_size() * shape.0 * shape.1 * dtype.bytes();
        if session
            .compiled
            .gathered
            .as_ref()
            .is_none_or(|buffer| buffer.bytes < gathered_bytes)
        {
            // Queued work and captured graphs may still use the old scratch
            // buffer: it stays alive with the session.
            let larger = DeviceBuffer::new(gathered_bytes)?;
            if let Some(old) = session.compiled.gathered.replace(larger) {
                session.compiled.retired.push(old);
            }
        }
        agmm(session)?;
        let state = &session.compiled;
        let (pool, offset) = state.containing(a as CUdeviceptr)?;
        let buffer = &pool.buffer;
        let (Some(ring), Some(gathered)) = (&state.agmm, &state.gathered) else {
            return Err(Error::InvalidArgument("no all-gather matmul state".into()));
        };
        let shard = Shard {
            buffer,
            offset,
            dtype,
        };
        ring.run_shard(
            &session.collectives,
            &shard,
            b as CUdeviceptr,
            gathered.ptr,
            c as CUdeviceptr,
            shape,
            &active_stream(session),
        )
    })
}

/// Rounds to run a measured choice between a generated kernel and the
/// library (`symm_mem.kernel_rounds`): 1 once decided, more while timing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_kernel_rounds(
    runtime: *mut SymmRuntime,
    site: i64,
    rows: i64,
    max_rows: i64,
) -> i64 {
    run("choosing a matmul's kernel", || {
        let session = session(runtime)?;
        let capturing = active_stream(session).is_capturing()?;
        session
            .compiled
            .kernels
            .rounds(site, rows, max_rows, capturing)
    })
}

/// 1 where the round runs the generated kernel (`symm_mem.kernel_variant`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_kernel_variant(
    runtime: *mut SymmRuntime,
    site: i64,
    rows: i64,
    round: i64,
    max_rows: i64,
) -> i32 {
    run("choosing a matmul's kernel", || {
        let session = session(runtime)?;
        let stream = active_stream(session);
        let way = session
            .compiled
            .kernels
            .variant((site, rows), round, max_rows, &stream)?;
        Ok(i32::from(way == crate::kernel_choice::Way::Generated))
    })
}

/// Ends a round of a measured choice (`symm_mem.kernel_variant_end`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_kernel_variant_end(
    runtime: *mut SymmRuntime,
    site: i64,
    rows: i64,
    round: i64,
) {
    run("timing a matmul's kernel", || {
        let session = session(runtime)?;
        let stream = active_stream(session);
        session
            .compiled
            .kernels
            .variant_end((site, rows), round, &stream)
    })
}

#[cfg(test)]
mod abi_tests {
    use super::*;
    use symm_protocol::abi::{Kind, RUNTIME_CALLS};

    /// The ABI kind of a C parameter or result type.
    trait AbiKind {
        const KIND: Kind;
    }
    impl AbiKind for i32 {
        const KIND: Kind = Kind::I32;
    }
    impl AbiKind for i64 {
        const KIND: Kind = Kind::I64;
    }
    impl<T> AbiKind for *mut T {
        const KIND: Kind = Kind::Ptr;
    }
    impl<T> AbiKind for *const T {
        const KIND: Kind = Kind::Ptr;
    }

    trait AbiResult {
        const KIND: Option<Kind>;
    }
    impl AbiResult for () {
        const KIND: Option<Kind> = None;
    }
    impl<T: AbiKind> AbiResult for T {
        const KIND: Option<Kind> = Some(T::KIND);
    }

    /// Parameters and result, as ABI kinds.
    type Kinds = (Vec<Kind>, Option<Kind>);

    /// The signature of an exported function, as ABI kinds.
    trait Signature {
        fn signature() -> Kinds;
    }
    macro_rules! signature {
        ($($param:ident),*) => {
            impl<R: AbiResult, $($param: AbiKind),*> Signature for unsafe extern "C" fn($($param),*) -> R {
                fn signature() -> Kinds {
                    (vec![$($param::KIND),*], R::KIND)
                }
            }
        };
    }
    signature!(A);
    signature!(A, B);
    signature!(A, B, C);
    signature!(A, B, C, D);
    signature!(A, B, C, D, E);
    signature!(A, B, C, D, E, F, G, H);
    signature!(A, B, C, D, E, F, G, H, I);
    signature!(A, B, C, D, E, F, G, H, I, J, K);
    signature!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q);

    fn of<F: Signature>(_: F) -> Kinds {
        F::signature()
    }

    #[test]
    fn every_runtime_call_is_exported_with_its_abi_signature() {
        // Each function's own signature (the casts only name the arity).
        let exported: Vec<(&str, Kinds)> = vec![
            (
                "symm_rt_enter_async",
                of(symm_rt_enter_async as unsafe extern "C" fn(_, _)),
            ),
            (
                "symm_rt_exit_async",
                of(symm_rt_exit_async as unsafe extern "C" fn(_) -> _),
            ),
            ("symm_rt_exit", of(symm_rt_exit as unsafe extern "C" fn(_))),
            (
                "symm_rt_graph_begin",
                of(symm_rt_graph_begin as unsafe extern "C" fn(_, _, _, _) -> _),
            ),
            (
                "symm_rt_graph_end",
                of(symm_rt_graph_end as unsafe extern "C" fn(_, _)),
            ),
            (
                "symm_rt_graph_buffer",
                of(symm_rt_graph_buffer as unsafe extern "C" fn(_, _, _, _) -> _),
            ),
            (
                "symm_rt_global",
                of(symm_rt_global as unsafe extern "C" fn(_, _, _) -> _),
            ),
            (
                "symm_rt_pool_descriptor",
                of(symm_rt_pool_descriptor as unsafe extern "C" fn(_, _) -> _),
            ),
            (
                "symm_rt_rank",
                of(symm_rt_rank as unsafe extern "C" fn(_) -> _),
            ),
            (
                "symm_rt_check_world",
                of(symm_rt_check_world as unsafe extern "C" fn(_, _)),
            ),
            (
                "symm_rt_check_tokens",
                of(symm_rt_check_tokens as unsafe extern "C" fn(_, _, _)),
            ),
            (
                "symm_rt_alloc",
                of(symm_rt_alloc as unsafe extern "C" fn(_, _) -> _),
            ),
            (
                "symm_rt_free",
                of(symm_rt_free as unsafe extern "C" fn(_, _)),
            ),
            (
                "symm_rt_copy",
                of(symm_rt_copy as unsafe extern "C" fn(_, _, _, _)),
            ),
            (
                "symm_rt_batch_matmul",
                of(symm_rt_batch_matmul
                    as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _)),
            ),
            (
                "symm_rt_host_wait",
                of(symm_rt_host_wait as unsafe extern "C" fn(_)),
            ),
            (
                "symm_rt_matmul",
                of(symm_rt_matmul as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _)),
            ),
            (
                "symm_rt_matmul_pair",
                of(symm_rt_matmul_pair as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _, _, _)),
            ),
            (
                "symm_rt_all_gather_matmul",
                of(symm_rt_all_gather_matmul as unsafe extern "C" fn(_, _, _, _, _, _, _, _)),
            ),
            (
                "symm_rt_kernel_rounds",
                of(symm_rt_kernel_rounds as unsafe extern "C" fn(_, _, _, _) -> _),
            ),
            (
                "symm_rt_kernel_variant",
                of(symm_rt_kernel_variant as unsafe extern "C" fn(_, _, _, _, _) -> _),
            ),
            (
                "symm_rt_kernel_variant_end",
                of(symm_rt_kernel_variant_end as unsafe extern "C" fn(_, _, _, _)),
            ),
        ];
        for call in RUNTIME_CALLS {
            let found = exported.iter().find(|(name, _)| *name == call.name);
            let Some((_, (params, result))) = found else {
                panic!("{} is in the ABI table but not checked here", call.name);
            };
            assert_eq!(
                (params.as_slice(), *result),
                (call.params, call.result),
                "{} is exported with another signature than the ABI table's",
                call.name
            );
        }
        assert_eq!(
            exported.len(),
            RUNTIME_CALLS.len(),
            "an export not in the ABI table"
        );
    }
}
