//! What programs compiled by `symm-compile` need of a rank's session
//! between and during their calls: the persistent pools (`symm_mem.global`),
//! the CUDA graphs of their partitions, temporaries, the matmul machinery,
//! and the call's stream and status. Each `symm_rt_*` entry point of the
//! ABI (`capi::compiled`) is one method here that returns a `Result`.

use super::Session;
use crate::{
    Error, Result,
    abi_types::GraphStats,
    agmm::{AllGatherMatmul, Matmul, Shard},
    cuda::{CUdeviceptr, CUstream, DeviceBuffer, Event, Graph, MemPool, Stream, check},
    function_graphs::{FunctionGraphCache, Limits, Step},
    gemm_algos::Strided,
    kernel_choice::{KernelChoices, Way},
    launch_list::LaunchList,
    library::{self, Dtype, GemmInputs},
    replay_pacer::{LegacyMark, ReplayPacer},
    replay_way::{self, Next, ReplayChoice, Setting, Way as ReplayWay},
    symmetric::SymmetricBuffer,
};
use cudarc::driver::sys;
use std::collections::{BTreeSet, HashMap};
use symm_protocol::abi::LayoutCode;

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
    graphs: FunctionGraphCache<CompiledGraph, DeviceBuffer>,
    /// The application's stream of the asynchronous call in flight.
    call_stream: Option<Stream>,
    /// While a partition of a call on the legacy default stream is
    /// captured: the runtime's stream, which the capture runs on (the
    /// legacy stream cannot be captured; the graph then replays on it).
    capture_stream: Option<Stream>,
    /// The first failure of an asynchronous call that `symm_status` has
    /// not reported yet; until it has, later calls do not run.
    pub(crate) status: Option<String>,
    /// Replays of calls on the legacy default stream, paced (made on the
    /// first such replay).
    legacy_pacer: Option<ReplayPacer<LegacyMark>>,
    /// Token counts every rank has been seen to call with.
    agreed_tokens: BTreeSet<i64>,
    /// The SM counts programs were compiled for that were compared with
    /// the GPU's (`check_sms`).
    checked_sms: BTreeSet<i64>,
    /// Generated kernel or library, per matmul site and row count.
    kernels: KernelChoices,
    /// TMA descriptors of the matrices generated kernels stream.
    tensor_maps: crate::tensor_maps::TensorMaps,
    /// Replays run as launch lists (`launch_list`), of `graphs.replays()`.
    launch_replays: u64,
}

impl Drop for CompiledState {
    fn drop(&mut self) {
        let (captures, replays) = (self.graphs.captures(), self.graphs.replays());
        if captures > 0 {
            tracing::info!(
                "CUDA graphs of compiled functions: {captures} captured, {replays} replays \
                 ({} of them as kernel launches)",
                self.launch_replays
            );
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

    /// What `symm_compiled_graph_stats` reports.
    pub fn graph_stats(&self) -> GraphStats {
        let mut stats = GraphStats {
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

/// A captured partition: its graph, the graph's kernels as a launch list
/// where it has one, and the choice between the two (`replay_way`).
pub struct CompiledGraph {
    graph: Graph,
    launches: Option<LaunchList>,
    choice: ReplayChoice,
    /// The events around the timed graph replay, made for the first.
    timing: Option<(Event, Event)>,
}

impl CompiledGraph {
    /// `graph` with its launch list (`id` names the partition where the
    /// graph has none).
    fn new(graph: Graph, id: u64) -> Result<Self> {
        let launches = match LaunchList::of(&graph)? {
            Ok(list) => {
                tracing::debug!(
                    "compiled partition {id:#x}: its graph's {} kernels may replay as launches \
                     ({} with node attributes of their own, {} waiting for the whole grid \
                     before: measured only where none does)",
                    list.len(),
                    list.with_attributes(),
                    list.whole_grid_waits()
                );
                Some(list)
            }
            Err(why) => {
                tracing::debug!("compiled partition {id:#x} replays as a CUDA graph: {why}");
                None
            }
        };
        Ok(Self {
            graph,
            launches,
            choice: ReplayChoice::default(),
            timing: None,
        })
    }

    /// What its next replay does under `setting`. Only a list whose
    /// launches all overlap the grid before is a candidate of the measured
    /// choice (`LaunchList::whole_grid_waits`).
    fn next(&self, setting: Setting) -> Next {
        match (&self.launches, setting) {
            (None, _) => Next::Replay(ReplayWay::Graph),
            (Some(_), Setting::Forced(way)) => Next::Replay(way),
            (Some(list), Setting::Measured) if list.whole_grid_waits() > 0 => {
                Next::Replay(ReplayWay::Graph)
            }
            (Some(_), Setting::Measured) => self.choice.next(),
        }
    }

    /// A timed graph replay's GPU time into the choice, once its events
    /// have completed (never waited for).
    fn read_timing(&mut self) -> Result<()> {
        if let (true, Some((start, end))) = (self.choice.is_pending(), &self.timing)
            && end.completed()?
        {
            let us = f64::from(start.elapsed_ms(end)?) * 1e3;
            self.choice.graph_timed(us);
        }
        Ok(())
    }
}

/// Replays `graph` on `stream`, between the `timing` events where given;
/// on the legacy default stream through its pacer (made on first use).
fn replay_graph(
    graph: &Graph,
    timing: Option<&(Event, Event)>,
    stream: &Stream,
    pacer: &mut Option<ReplayPacer<LegacyMark>>,
) -> Result<()> {
    let replay = || -> Result<()> {
        if let Some((start, _)) = timing {
            start.record(stream)?;
        }
        graph.replay(stream)?;
        if let Some((_, end)) = timing {
            end.record(stream)?;
        }
        Ok(())
    };
    if !stream.is_legacy() {
        return replay();
    }
    if pacer.is_none() {
        let Some(ahead) = legacy_ahead()? else {
            return replay();
        };
        let marks = (0..ahead)
            .map(|_| LegacyMark::new())
            .collect::<Result<Vec<_>>>()?;
        *pacer = Some(ReplayPacer::new(marks));
    }
    match pacer {
        Some(pacer) => pacer.paced(replay),
        None => replay(),
    }
}

/// A size argument of the ABI (an i64), as a `usize`.
pub fn size(value: i64, what: &str) -> Result<usize> {
    usize::try_from(value).map_err(|_| Error::InvalidArgument(format!("{what} is {value}")))
}

/// A matmul's layout code argument (how its inputs are stored).
fn layout(code: i32) -> Result<LayoutCode> {
    library::decode(code.into(), LayoutCode::from_code, "matmul layout")
}

/// Whether compiled functions may become CUDA graphs: unless the
/// environment sets `SYMM_CUDA_GRAPHS=0` (to debug, or around code a
/// capture cannot hold).
fn graphs_enabled() -> bool {
    static ENABLED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ENABLED.get_or_init(|| std::env::var("SYMM_CUDA_GRAPHS").map_or(true, |v| v != "0"))
}

/// A setting read from the environment once (`read`, given a lookup of
/// the process's environment): a malformed value fails every call that
/// needs it, with the same message.
fn env_once<T: Clone>(
    cell: &'static std::sync::OnceLock<std::result::Result<T, String>>,
    read: impl FnOnce(&dyn Fn(&str) -> Option<String>) -> Result<T>,
) -> Result<T> {
    cell.get_or_init(|| {
        read(&|name| std::env::var(name).ok()).map_err(|error| match error {
            Error::Env(message) => message,
            other => other.to_string(),
        })
    })
    .clone()
    .map_err(Error::Env)
}

/// The replays a caller on the legacy default stream may have queued
/// (`replay_pacer`), None for no bound.
fn legacy_ahead() -> Result<Option<usize>> {
    static AHEAD: std::sync::OnceLock<std::result::Result<Option<usize>, String>> =
        std::sync::OnceLock::new();
    env_once(&AHEAD, |lookup| crate::replay_pacer::ahead_from_env(lookup))
}

/// How captured calls replay (`SYMM_GRAPH_REPLAY`).
fn replay_setting() -> Result<Setting> {
    static SETTING: std::sync::OnceLock<std::result::Result<Setting, String>> =
        std::sync::OnceLock::new();
    env_once(&SETTING, |lookup| replay_way::setting_from_env(lookup))
}

/// The graph cache's limits the environment sets.
fn graph_limits() -> Result<Limits> {
    static LIMITS: std::sync::OnceLock<std::result::Result<Limits, String>> =
        std::sync::OnceLock::new();
    env_once(&LIMITS, |lookup| Limits::from_env(lookup))
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

/// A strided operand of a batched matmul: address, row stride and batch
/// stride (elements).
pub type StridedArgs = (CUdeviceptr, i64, i64);

// The call: its stream, status and checks.
impl Session {
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
    pub fn synchronize_compiled(&mut self, stream: sys::CUstream) -> Result<()> {
        self.device.bind()?;
        let raw = if stream.is_null() {
            self.stream.raw
        } else {
            stream
        };
        Stream::borrowed(raw).synchronize()?;
        self.compiled_status()
    }

    /// The stream the running compiled call enqueues on: the application's
    /// for an asynchronous call given one, else the runtime's; while a
    /// partition of a call on the legacy default stream is captured, the
    /// runtime's.
    pub fn active_stream(&self) -> Stream {
        let raw = self
            .compiled
            .capture_stream
            .as_ref()
            .or(self.compiled.call_stream.as_ref())
            .map_or(self.stream.raw, |stream| stream.raw);
        Stream::borrowed(raw)
    }

    /// The stream a call's graphs replay on: the application's for an
    /// asynchronous call given one, else the runtime's.
    fn call_stream(&self) -> Stream {
        let raw = self
            .compiled
            .call_stream
            .as_ref()
            .map_or(self.stream.raw, |stream| stream.raw);
        Stream::borrowed(raw)
    }

    /// Starts a call of an asynchronous entry point on `stream` (NULL: the
    /// runtime's); refused while an earlier failure is unreported.
    pub fn enter_async(&mut self, stream: sys::CUstream) -> Result<()> {
        if let Some(earlier) = &self.compiled.status {
            return Err(Error::InvalidArgument(format!(
                "an earlier asynchronous call failed and symm_status has not reported it yet \
                 ({earlier})"
            )));
        }
        self.device.bind()?;
        self.compiled.call_stream = (!stream.is_null()).then(|| Stream::borrowed(stream));
        crate::mgpu::set_current_stream(self.active_stream().raw);
        Ok(())
    }

    /// The outermost asynchronous call is over: its stream is forgotten.
    pub fn leave_async(&mut self) {
        crate::mgpu::set_current_stream(std::ptr::null_mut());
        self.compiled.call_stream = None;
        self.compiled.capture_stream = None;
    }

    /// Ends an asynchronous call (`symm_rt_exit_async`; `session` is None
    /// when the caller passed no runtime): the outermost call leaves its
    /// stream, and a failure in the call is kept for `symm_status`.
    /// Returns the failure's message.
    pub fn exit_async(session: Option<&mut Session>) -> Option<String> {
        let failure = crate::compiled_call::end();
        let mut session = session;
        if !crate::compiled_call::in_call() {
            match session.as_deref_mut() {
                Some(session) => session.leave_async(),
                None => crate::mgpu::set_current_stream(std::ptr::null_mut()),
            }
        }
        let failure = failure?;
        if let Some(session) = session {
            session.keep_failure(&failure);
        }
        Some(failure)
    }

    /// Keeps an asynchronous call's failure for `symm_status` (the first
    /// one stays).
    pub fn keep_failure(&mut self, failure: &str) {
        self.compiled
            .status
            .get_or_insert_with(|| failure.to_owned());
    }

    /// After a synchronizing entry point's body: its failure, or its work
    /// waited for and the peers checked (not under the application's own
    /// capture, where nothing ran yet).
    pub fn finish_sync(&mut self) -> Result<()> {
        if let Some(failure) = self.compiled.status.take() {
            return Err(Error::CallFailed(failure));
        }
        if self.stream.is_capturing()? {
            return Ok(());
        }
        self.stream.synchronize()?;
        self.check_peers_naming("a compiled collective")
    }

    /// Checks that the program was compiled against this runtime's
    /// protocol (`symm_protocol::PROTOCOL_FINGERPRINT`).
    pub fn check_protocol(&self, fingerprint: i64) -> Result<()> {
        protocol_matches(fingerprint)
    }

    /// Checks that the program was compiled for this many ranks.
    pub fn check_world(&self, world: i64) -> Result<()> {
        let actual = self.group.world_size();
        if actual as i64 != world {
            return Err(Error::InvalidArgument(format!(
                "the program was compiled for {world} ranks but runs on {actual}"
            )));
        }
        Ok(())
    }

    /// Compares the SMs the program's GEMV grids were balanced over
    /// (`symm-compile --sms`) with this GPU's, once per count: a mismatch
    /// only costs speed (each matmul site's measured choice still guards
    /// it), so it is logged, not refused.
    pub fn check_sms(&mut self, sms: i64) -> Result<()> {
        if self.compiled.checked_sms.insert(sms) {
            let actual = self.device.multiprocessors()?;
            if let Some(message) = sms_mismatch(sms, actual) {
                tracing::warn!("{message}");
            }
        }
        Ok(())
    }

    /// Checks a call's token count against the largest the program was
    /// compiled for, and (once per count) that every rank passes it.
    pub fn check_tokens(&mut self, tokens: i64, max: i64) -> Result<()> {
        if tokens < 1 || tokens > max {
            return Err(Error::InvalidArgument(format!(
                "the call has {tokens} tokens (the leading size of its dynamic memrefs); the \
                 program takes 1 to {max} (its symm_mem.max_tokens)"
            )));
        }
        // Every rank must pass the same count: the first call with each
        // count compares it across ranks (once; later calls cost nothing).
        if !self.compiled.agreed_tokens.contains(&tokens) {
            let check = self.compiled.agreed_tokens.len();
            let id = format!("compiled-tokens/{check}");
            crate::group::agree_on_size(&mut self.group, &id, tokens as u64).map_err(|error| {
                match error {
                    Error::SizeMismatch { other, theirs, .. } => Error::InvalidArgument(format!(
                        "this rank calls with {tokens} tokens, rank {other} with {theirs}: every \
                         rank must pass the same token count"
                    )),
                    other => other,
                }
            })?;
            self.compiled.agreed_tokens.insert(tokens);
        }
        Ok(())
    }
}

// CUDA graphs of compiled partitions.
impl Session {
    /// Starts a run of partition `id` keyed by its arguments: true
    /// when the body must run (eagerly, or under a capture that
    /// `graph_end` finishes), false when a graph was replayed instead.
    pub fn graph_begin(&mut self, id: u64, key: Vec<u64>) -> Result<bool> {
        let stream = self.active_stream();
        // The application may be capturing this call itself.
        let app_capturing = stream.is_capturing()?;
        let may_capture = graphs_enabled() && !app_capturing;
        self.compiled.graphs.set_limits(graph_limits()?);
        let stepped = self.compiled.graphs.step(id, &key, may_capture);
        if let Some((keys, bytes)) = stepped.thrashing {
            tracing::warn!(
                "compiled partition {id:#x}: its graph cache forgot its least recently used \
                 argument set to make room ({keys} sets and {:.1} MiB of buffers kept). Calls that \
                 cycle through more argument sets than it keeps (a model's layers, each with its \
                 weights, at several token counts) run eagerly, and synchronize where a forgotten \
                 set's buffers are freed; raise {} or {}",
                bytes as f64 / (1 << 20) as f64,
                crate::function_graphs::KEYS_ENV,
                crate::function_graphs::BYTES_ENV
            );
        }
        if !stepped.evicted.is_empty() {
            // Buffers of a key forgotten: queued work may still use them,
            // so they go after a synchronize (kept to the end under the
            // application's capture, which a synchronize would break).
            if app_capturing {
                self.compiled.retired.extend(stepped.evicted);
            } else {
                self.device.synchronize()?;
                drop(stepped.evicted);
            }
        }
        match stepped.step {
            Step::Run => {
                tracing::debug!("compiled partition {id:#x}: eager run");
                Ok(true)
            }
            Step::Capture => {
                tracing::info!(
                    "compiled partition {id:#x}: capturing a CUDA graph ({} graphs captured so far)",
                    self.compiled.graphs.captures()
                );
                // The legacy default stream cannot be captured: the body is
                // captured on the runtime's stream (nothing runs during a
                // capture, so no order is lost) and the graph replays on the
                // call's stream.
                let stream = if stream.is_legacy() {
                    self.compiled.capture_stream = Some(Stream::borrowed(self.stream.raw));
                    let capture = self.active_stream();
                    crate::mgpu::set_current_stream(capture.raw);
                    capture
                } else {
                    stream
                };
                if let Err(error) = Graph::begin_capture(&stream) {
                    self.leave_capture_stream();
                    return Err(error);
                }
                crate::programmatic_launch::set_own_capture(true);
                Ok(true)
            }
            Step::Replay => {
                tracing::debug!("compiled partition {id:#x}: replaying its graph");
                self.replay_partition(id)?;
                Ok(false)
            }
        }
    }

    /// Buffer `index` of `bytes` bytes of the run of partition `function`
    /// in progress: the same address for the capture and every replay.
    pub fn graph_buffer(&mut self, function: u64, index: i64, bytes: i64) -> Result<CUdeviceptr> {
        let index = size(index, "the buffer index")?;
        let bytes = size(bytes, "the buffer size")?;
        let capturing = self.active_stream().is_capturing()?;
        let buffer = self
            .compiled
            .graphs
            .buffer(function, index, bytes, |bytes| {
                tracing::debug!("partition buffer #{index}: {bytes} B");
                if capturing {
                    // Under the application's own capture (thread-local
                    // mode), an allocation must say it is not captured.
                    crate::cuda::outside_capture(|| DeviceBuffer::new(bytes))
                } else {
                    DeviceBuffer::new(bytes)
                }
            })?;
        let buffer = buffer.ok_or_else(|| {
            Error::InvalidArgument(format!(
                "partition buffer #{index} of {bytes} B: no run of its partition is in \
                 progress, or the same arguments asked for another size before"
            ))
        })?;
        Ok(buffer.ptr)
    }

    /// Ends the body of partition `id`: a capture in progress is
    /// instantiated, kept and launched, or dropped when the body failed.
    pub fn graph_end(&mut self, id: u64, body_failed: bool) -> Result<()> {
        if !self.compiled.graphs.capturing(id) {
            return Ok(());
        }
        let captured = Graph::end_capture(&self.active_stream());
        crate::programmatic_launch::set_own_capture(false);
        self.leave_capture_stream();
        let graph = match captured {
            Ok(graph) => graph,
            Err(error) => {
                self.compiled.graphs.abandon(id);
                return Err(
                    error.hinted("set SYMM_CUDA_GRAPHS=0 to run compiled functions without graphs")
                );
            }
        };
        if body_failed {
            drop(graph);
            self.compiled.graphs.abandon(id);
            return Ok(());
        }
        let graph = CompiledGraph::new(graph, id)?;
        self.compiled
            .graphs
            .captured(id, graph)
            .ok_or_else(|| Error::InvalidArgument("no capture to finish".into()))?;
        self.replay_partition(id)
    }

    /// Replays partition `id`'s capture of the arguments in flight on the
    /// call's stream: as its graph (on the legacy default stream, paced:
    /// `replay_pacer`) or as its launch list, as `replay_way` chooses.
    fn replay_partition(&mut self, id: u64) -> Result<()> {
        let setting = replay_setting()?;
        let stream = self.call_stream();
        let compiled = &mut self.compiled;
        let entry = compiled
            .graphs
            .graph_mut(id)
            .ok_or_else(|| Error::InvalidArgument("a cached graph disappeared".into()))?;
        entry.read_timing()?;
        match (entry.next(setting), entry.launches.as_ref()) {
            (Next::TimeLaunches, Some(list)) => {
                compiled.launch_replays += 1;
                let started = std::time::Instant::now();
                list.launch(&stream)?;
                let us = started.elapsed().as_secs_f64() * 1e6;
                if let Some(way) = entry.choice.launches_timed(us) {
                    let (gpu, host) = entry.choice.samples();
                    tracing::info!(
                        "compiled partition {id:#x}: replays {} (the host launches its {} \
                         kernels in {host:.1} us, the graph takes the GPU {gpu:.1} us)",
                        match way {
                            ReplayWay::Launches => "as kernel launches",
                            ReplayWay::Graph => "as its CUDA graph",
                        },
                        list.len()
                    );
                }
                Ok(())
            }
            (Next::Replay(ReplayWay::Launches), Some(list)) => {
                compiled.launch_replays += 1;
                list.launch(&stream)
            }
            (next, _) => {
                let timed = next == Next::TimeGraph;
                if timed && entry.timing.is_none() {
                    entry.timing = Some((Event::new()?, Event::new()?));
                }
                let timing = entry.timing.as_ref().filter(|_| timed);
                replay_graph(&entry.graph, timing, &stream, &mut compiled.legacy_pacer)?;
                if timed {
                    entry.choice.graph_pending();
                }
                Ok(())
            }
        }
    }

    /// A capture on the runtime's stream for a call on the legacy default
    /// stream is over: the call's stream is the active one again.
    fn leave_capture_stream(&mut self) {
        if self.compiled.capture_stream.take().is_some() {
            crate::mgpu::set_current_stream(self.call_stream().raw);
        }
    }
}

// Memory: pools, temporaries, copies.
impl Session {
    /// The local address of persistent symmetric pool `id` of `bytes`
    /// bytes, allocated collectively on first use.
    pub fn global(&mut self, id: i64, bytes: i64) -> Result<CUdeviceptr> {
        let bytes = size(bytes, "the pool size")?;
        if let Some(Pool { buffer, .. }) = self.compiled.globals.get(&id) {
            // Two objects may name a pool alike; a smaller one must not be
            // handed out for a larger request.
            if buffer.bytes < bytes {
                return Err(Error::InvalidArgument(format!(
                    "pool {id:016x} was created with {} bytes, now {bytes} are asked for",
                    buffer.bytes
                )));
            }
            return Ok(buffer.local());
        }
        let name = format!("compiled/{id:016x}");
        let device = self.device.ordinal;
        let buffer = SymmetricBuffer::allocate(&mut self.group, device, &name, bytes)?;
        if !buffer.p2p {
            return Err(Error::InvalidArgument(
                "compiled collectives need peer access between all ranks (one NVLink domain)"
                    .into(),
            ));
        }
        let local = buffer.local();
        let pool = Pool::new(buffer, &self.collectives)?;
        self.compiled.globals.insert(id, pool);
        tracing::info!("compiled program's symmetric pool {id:016x}: {bytes} B");
        Ok(local)
    }

    /// The descriptor of the pool holding `pointer`.
    pub fn pool_descriptor(&self, pointer: CUdeviceptr) -> Result<CUdeviceptr> {
        let (pool, _) = self.compiled.containing(pointer)?;
        Ok(pool.descriptor)
    }

    /// Regular device memory, ordered on the call's stream.
    pub fn alloc(&mut self, bytes: i64) -> Result<CUdeviceptr> {
        let bytes = size(bytes, "the allocation size")?.max(1);
        if self.compiled.temporaries.is_none() {
            self.compiled.temporaries = Some(MemPool::new(self.device.ordinal)?);
        }
        let pool = self
            .compiled
            .temporaries
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("no pool for temporaries".into()))?;
        pool.alloc(bytes, &self.active_stream())
    }

    /// Frees `alloc`'s memory after the call's queued work.
    pub fn free(&self, pointer: CUdeviceptr) -> Result<()> {
        // SAFETY: memory from symm_rt_alloc; freed after queued work.
        check(
            unsafe { sys::cuMemFreeAsync(pointer, self.active_stream().raw) },
            "cuMemFreeAsync",
        )
    }

    /// `bytes` from `src` to `dst` on the call's stream (device or pinned
    /// host memory on either side).
    pub fn copy(&self, dst: CUdeviceptr, src: CUdeviceptr, bytes: i64) -> Result<()> {
        let bytes = size(bytes, "the copy size")?;
        // SAFETY: buffers of at least `bytes`, by the lowering; unified
        // addressing tells host from device.
        check(
            unsafe { sys::cuMemcpyAsync(dst, src, bytes, self.active_stream().raw) },
            "cuMemcpyAsync",
        )
    }

    /// Waits for the call's work so far, so that the host may read what a
    /// copy into host memory brought; an error under the application's
    /// own capture, where nothing has run.
    pub fn host_wait(&self) -> Result<()> {
        let stream = self.active_stream();
        if stream.is_capturing()? {
            return Err(Error::InvalidArgument(
                "this compiled function reads device results on the host (a copy into \
                 #cudagraph.host memory), which cannot happen inside the application's own \
                 graph capture; call it outside symm_graph_begin/end"
                    .into(),
            ));
        }
        stream.synchronize()
    }
}

// Matmuls: cuBLAS, the all-gather matmul, and the measured choice of
// generated kernels.
impl Session {
    fn agmm(&mut self) -> Result<&AllGatherMatmul> {
        let world = self.group.world_size();
        if self.compiled.agmm.is_none() {
            self.compiled.agmm = Some(AllGatherMatmul::new(world)?);
        }
        self.compiled
            .agmm
            .as_ref()
            .ok_or_else(|| Error::InvalidArgument("no all-gather matmul state".into()))
    }

    /// Decodes what the matmul calls share: sizes `[m, n, k]`, the dtype
    /// code and whether to accumulate.
    fn matmul_call(
        &mut self,
        [m, n, k]: [i64; 3],
        dtype_code: i32,
        accumulate: i32,
    ) -> Result<MatmulCall<'_>> {
        let shape = (size(m, "m")?, size(k, "k")?, size(n, "n")?);
        let dtype = library::decode(dtype_code.into(), Dtype::from_code, "dtype")?;
        let stream = self.active_stream().raw;
        let agmm = self.agmm()?;
        Ok(MatmulCall {
            matmul: &agmm.matmul,
            dtype,
            shape,
            // linalg.matmul adds to c; with a zero fill folded in it overwrites.
            beta: if accumulate != 0 { 1.0 } else { 0.0 },
            stream,
        })
    }

    /// `c (+)= a @ b` for row-major device matrices.
    pub fn matmul(
        &mut self,
        operands: [CUdeviceptr; 3],
        sizes: [i64; 3],
        dtype_code: i32,
        accumulate: i32,
    ) -> Result<()> {
        let call = self.matmul_call(sizes, dtype_code, accumulate)?;
        call.matmul
            .gemm(call.dtype, operands, call.shape, call.beta, call.stream)
    }

    /// Two matmuls sharing `a`: `(b0, c0)` and `(b1, c1)`, the inputs
    /// stored as layout code `layout_code` says.
    pub fn matmul_pair(
        &mut self,
        a: CUdeviceptr,
        [first, second]: [[CUdeviceptr; 2]; 2],
        sizes: [i64; 3],
        [dtype_code, accumulate, layout_code]: [i32; 3],
    ) -> Result<()> {
        let layout = layout(layout_code)?;
        let call = self.matmul_call(sizes, dtype_code, accumulate)?;
        call.matmul.gemm_pair(
            GemmInputs {
                dtype: call.dtype,
                layout,
            },
            a,
            first,
            second,
            call.shape,
            call.beta,
            call.stream,
        )
    }

    /// `c_i (+)= a_i @ b_i` for `i < batch`, each operand strided, the
    /// inputs stored as layout code `layout_code` says.
    pub fn batch_matmul(
        &mut self,
        [a, b, c]: [StridedArgs; 3],
        batch: i64,
        sizes: [i64; 3],
        [in_code, out_code]: [i32; 2],
        [accumulate, layout_code]: [i32; 2],
    ) -> Result<()> {
        let layout = layout(layout_code)?;
        let call = self.matmul_call(sizes, in_code, accumulate)?;
        let out = library::decode(out_code.into(), Dtype::from_code, "output dtype")?;
        let operand = |(ptr, ld, batch_stride): StridedArgs, dtype, transposed| {
            Ok::<_, Error>(Strided {
                ptr,
                dtype,
                ld: size(ld, "a row stride")?,
                batch_stride: size(batch_stride, "a batch stride")? as i64,
                transposed,
            })
        };
        let batch = i32::try_from(size(batch, "the batch")?).map_err(|_| {
            Error::InvalidArgument(format!("a batch of {batch} is too large for cuBLAS"))
        })?;
        call.matmul.gemm_strided(
            [
                operand(a, call.dtype, layout.a_transposed())?,
                operand(b, call.dtype, layout.b_transposed())?,
                operand(c, out, false)?,
            ],
            batch,
            call.shape,
            call.beta,
            call.stream,
        )
    }

    /// `c = all_gather(a) @ b`: `a` (m x k, in a symmetric pool) is this
    /// rank's row shard.
    pub fn all_gather_matmul(
        &mut self,
        [a, b, c]: [CUdeviceptr; 3],
        [m, k, n]: [i64; 3],
        dtype_code: i32,
    ) -> Result<()> {
        let shape = (size(m, "m")?, size(k, "k")?, size(n, "n")?);
        let dtype = library::decode(dtype_code.into(), Dtype::from_code, "dtype")?;
        let gathered_bytes = self.group.world_size() * shape.0 * shape.1 * dtype.bytes();
        if self
            .compiled
            .gathered
            .as_ref()
            .is_none_or(|buffer| buffer.bytes < gathered_bytes)
        {
            // Queued work and captured graphs may still use the old scratch
            // buffer: it stays alive with the session.
            let larger = DeviceBuffer::new(gathered_bytes)?;
            if let Some(old) = self.compiled.gathered.replace(larger) {
                self.compiled.retired.push(old);
            }
        }
        self.agmm()?;
        let stream = self.active_stream();
        let state = &self.compiled;
        let (pool, offset) = state.containing(a)?;
        let (Some(ring), Some(gathered)) = (&state.agmm, &state.gathered) else {
            return Err(Error::InvalidArgument("no all-gather matmul state".into()));
        };
        let shard = Shard {
            buffer: &pool.buffer,
            offset,
            dtype,
        };
        ring.run_shard(
            &self.collectives,
            &shard,
            b,
            gathered.ptr,
            c,
            shape,
            &stream,
        )
    }

    /// Rounds to run a measured choice between a generated kernel and the
    /// library: 1 once decided, more while timing.
    pub fn kernel_rounds(
        &mut self,
        site: i64,
        rows: i64,
        max_rows: i64,
        after: i64,
    ) -> Result<i64> {
        let capturing = self.active_stream().is_capturing()?;
        self.compiled
            .kernels
            .rounds(site, rows, max_rows, capturing, after)
    }

    /// The device address of `key`'s TMA descriptor, or 0 where there is
    /// none (`symm_mem.tensor_map`).
    pub fn tensor_map(&mut self, key: crate::tensor_maps::TensorMapKey) -> Result<u64> {
        let stream = self.active_stream();
        self.compiled.tensor_maps.get(key, || stream.is_capturing())
    }

    /// Whether round `round` runs the generated kernel.
    pub fn kernel_variant(
        &mut self,
        site: i64,
        rows: i64,
        round: i64,
        max_rows: i64,
    ) -> Result<bool> {
        let stream = self.active_stream();
        let way = self
            .compiled
            .kernels
            .variant((site, rows), round, max_rows, &stream)?;
        Ok(way == Way::Generated)
    }

    /// Ends round `round` of a measured choice; after the last, the ranks
    /// share their times and decide together (each way at its slowest
    /// rank's time), so that every rank takes the same way.
    pub fn kernel_variant_end(&mut self, site: i64, rows: i64, round: i64) -> Result<()> {
        let stream = self.active_stream();
        let Some(mine) = self
            .compiled
            .kernels
            .variant_end((site, rows), round, &stream)?
        else {
            return Ok(());
        };
        let parts = self
            .group
            .all_gather(&format!("kernel-choice/{site:x}/{rows}"), &mine.to_bytes())
            .map_err(|error| unshared_timings(error, site, rows))?;
        let slowest = mine.slowest_of(&parts)?;
        self.compiled
            .kernels
            .decide(slowest, self.group.world_size());
        Ok(())
    }
}

/// The error of ranks that did not share their timings of a matmul site
/// (a store timeout says which), in the words of its likely causes.
fn unshared_timings(error: Error, site: i64, rows: i64) -> Error {
    match error {
        Error::RendezvousTimeout {
            missing, seconds, ..
        } => Error::InvalidArgument(format!(
            "rank(s) {missing:?} did not share their timings of matmul site {site:#x} at {rows} \
             rows within {seconds:.1} s: every rank must run the same program with the same \
             SYMM_MATMUL (a rank that forces a way never measures), or a peer is dead or hung"
        )),
        other => other,
    }
}

/// Ok when `address`, of buffer argument `index` of a call (counted as in
/// the entry point's signature, from 0), is a multiple of `alignment`
/// bytes; else the error the call fails with.
pub fn check_aligned(address: u64, index: i64, alignment: i64) -> Result<()> {
    let alignment = u64::try_from(alignment).unwrap_or(1).max(1);
    if address.is_multiple_of(alignment) {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "buffer argument #{index} is at {address:#x}, which is not a multiple of {alignment} \
         bytes: the compiled program's kernels move {alignment}-byte vectors, so every buffer \
         must start on such a boundary (pass a copy of a view that starts inside a row)"
    )))
}

/// Whether a program compiled with protocol `fingerprint` can run on
/// this runtime: the same `symm_protocol::PROTOCOL_FINGERPRINT`, or an
/// error that says to build both from one version of symm.
pub fn protocol_matches(fingerprint: i64) -> Result<()> {
    let ours = symm_protocol::PROTOCOL_FINGERPRINT;
    if fingerprint as u64 == ours {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "the program was compiled against symm protocol {:#x}, but this runtime speaks {ours:#x} \
         (the pools' layout and the Lamport regions differ): compile the program and build the \
         runtime from the same version of symm",
        fingerprint as u64
    )))
}

/// What to say where a program's GEMV grids were balanced over `compiled`
/// SMs and the GPU has `actual` (`None`: they agree).
fn sms_mismatch(compiled: i64, actual: i64) -> Option<String> {
    (compiled != actual).then(|| {
        format!(
            "the program's generated matmuls were compiled for a GPU of {compiled} SMs \
             (symm-compile --sms), but this one has {actual}: their grids may leave SMs idle \
             or take a second wave. Their results are right; recompile with --sms {actual} for \
             their speed"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::{check_aligned, protocol_matches, sms_mismatch, unshared_timings};
    use crate::error::Error;

    #[test]
    fn a_gpu_of_other_sms_is_named_with_the_flag_that_fits_it() {
        assert_eq!(sms_mismatch(132, 132), None);
        let message = sms_mismatch(132, 114).expect("a mismatch");
        assert!(message.contains("132 SMs"), "{message}");
        assert!(message.contains("has 114"), "{message}");
        assert!(message.contains("--sms 114"), "{message}");
    }

    #[test]
    fn a_program_of_another_protocol_is_refused() {
        let ours = symm_protocol::PROTOCOL_FINGERPRINT as i64;
        assert!(protocol_matches(ours).is_ok());
        for other in [0, ours - 1, ours ^ (1 << 40)] {
            let error = protocol_matches(other).unwrap_err().to_string();
            assert!(error.contains("compiled against symm protocol"), "{error}");
            assert!(error.contains("same version of symm"), "{error}");
        }
    }

    #[test]
    fn ranks_that_never_share_their_timings_are_named() {
        let timeout = Error::RendezvousTimeout {
            key: "kernel-choice/7/16".into(),
            missing: vec![1],
            seconds: 20.0,
        };
        let error = unshared_timings(timeout, 7, 16).to_string();
        assert!(
            error.contains("rank(s) [1] did not share their timings of matmul site 0x7 at 16 rows")
                && error.contains("SYMM_MATMUL"),
            "{error}"
        );
        let other = unshared_timings(Error::Store("closed".into()), 7, 16).to_string();
        assert!(other.contains("closed"), "{other}");
    }

    #[test]
    fn a_buffer_off_the_boundary_is_refused_by_its_argument_index() {
        assert!(check_aligned(0x7f00_0000_a000, 0, 16).is_ok());
        assert!(check_aligned(0, 5, 16).is_ok());
        let error = check_aligned(0x7f00_0000_a002, 3, 16)
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("buffer argument #3 is at 0x7f000000a002")
                && error.contains("not a multiple of 16 bytes"),
            "{error}"
        );
        // A nonsensical alignment checks nothing rather than dividing by 0.
        assert!(check_aligned(3, 0, 0).is_ok());
    }
}
