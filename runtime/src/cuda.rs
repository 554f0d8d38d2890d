//! The few CUDA driver calls the runtime makes, with errors turned into
//! `Error::Driver` (the call, and the driver's status as a value). The driver library is loaded at run time by cudarc, so a
//! machine without a GPU builds and runs everything but the GPU parts.

use crate::error::{Error, Result};
use cudarc::driver::sys::{self, CUresult};
use std::{
    collections::HashMap,
    ffi::{CString, c_void},
    sync::Mutex,
};

pub use sys::{CUdeviceptr, CUstream};

/// Turns a driver status into a Result naming the call.
pub fn check(status: CUresult, what: &str) -> Result<()> {
    if status == CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(Error::Driver {
            what: what.to_owned(),
            status,
        })
    }
}

/// `message` (of an error whose own driver status is `own`, if any), with
/// the current context's sticky error appended when it has one that is
/// not that status: after a kernel faults (an illegal address, say), every
/// later call fails with errors of its own (cuBLAS reports an internal
/// error), and this says what happened first. Waits for the context's
/// work; only for failure paths.
pub fn with_context_error(message: String, own: Option<CUresult>) -> String {
    // SAFETY: a driver call on the current context (none: it fails and
    // nothing is appended).
    let sticky = unsafe { sys::cuCtxSynchronize() };
    with_sticky_error(message, own, sticky)
}

/// `with_context_error` once the context's status is known.
fn with_sticky_error(message: String, own: Option<CUresult>, sticky: CUresult) -> String {
    if sticky == CUresult::CUDA_SUCCESS
        || sticky == CUresult::CUDA_ERROR_INVALID_CONTEXT
        || own == Some(sticky)
    {
        return message;
    }
    format!("{message} (the GPU context reports {sticky:?}: an earlier kernel failed)")
}

/// Whether a CUDA driver and at least one device are present.
pub fn device_count() -> usize {
    // SAFETY: probing the driver library; no state is touched if absent.
    unsafe {
        if !sys::is_culib_present() || sys::cuInit(0) != CUresult::CUDA_SUCCESS {
            return 0;
        }
        let mut count = 0;
        if sys::cuDeviceGetCount(&mut count) != CUresult::CUDA_SUCCESS {
            return 0;
        }
        count.max(0) as usize
    }
}

/// A device with its primary context current on the calling thread.
pub struct Device {
    pub ordinal: i32,
    pub device: sys::CUdevice,
    context: sys::CUcontext,
}

// SAFETY: driver handles are usable from any thread once made current.
unsafe impl Send for Device {}
unsafe impl Sync for Device {}

impl Device {
    pub fn open(ordinal: usize) -> Result<Self> {
        if device_count() <= ordinal {
            return Err(Error::Cuda(format!(
                "no CUDA device {ordinal} ({} present)",
                device_count()
            )));
        }
        let ordinal = ordinal as i32;
        // SAFETY: plain driver calls with out-pointers to locals.
        unsafe {
            let mut device = 0;
            check(sys::cuDeviceGet(&mut device, ordinal), "cuDeviceGet")?;
            let mut context = std::ptr::null_mut();
            check(
                sys::cuDevicePrimaryCtxRetain(&mut context, device),
                "cuDevicePrimaryCtxRetain",
            )?;
            check(sys::cuCtxSetCurrent(context), "cuCtxSetCurrent")?;
            Ok(Self {
                ordinal,
                device,
                context,
            })
        }
    }

    /// The device's UUID (the same in every process that opens it,
    /// whatever its ordinal there).
    pub fn uuid(&self) -> Result<[u8; 16]> {
        let mut uuid = sys::CUuuid_st { bytes: [0; 16] };
        // SAFETY: an out-pointer to a local.
        check(
            unsafe { sys::cuDeviceGetUuid_v2(&mut uuid, self.device) },
            "cuDeviceGetUuid",
        )?;
        Ok(uuid.bytes.map(|b| b as u8))
    }

    /// The device's streaming multiprocessors.
    pub fn multiprocessors(&self) -> Result<i64> {
        let mut count = 0;
        // SAFETY: an out-pointer to a local.
        check(
            unsafe {
                sys::cuDeviceGetAttribute(
                    &mut count,
                    sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                    self.device,
                )
            },
            "cuDeviceGetAttribute",
        )?;
        Ok(i64::from(count))
    }

    /// Makes this device's context current on the calling thread.
    pub fn bind(&self) -> Result<()> {
        // SAFETY: the context is retained for our lifetime.
        check(
            unsafe { sys::cuCtxSetCurrent(self.context) },
            "cuCtxSetCurrent",
        )
    }

    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a current context exists.
        check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")
    }

    /// (free, total) bytes of device memory.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        let (mut free, mut total) = (0usize, 0usize);
        // SAFETY: out-pointers to locals.
        check(
            unsafe { sys::cuMemGetInfo_v2(&mut free, &mut total) },
            "cuMemGetInfo",
        )?;
        Ok((free, total))
    }
}

impl Drop for Device {
    fn drop(&mut self) {
        // SAFETY: releases the retain taken in `open`.
        unsafe {
            sys::cuDevicePrimaryCtxRelease_v2(self.device);
        }
    }
}

/// Plain device memory (`cuMemAlloc`), never from a graph's pool: the peer
/// tables live here (the seed-000 leak fix), freed on drop.
pub struct DeviceBuffer {
    pub ptr: CUdeviceptr,
    pub bytes: usize,
}

impl DeviceBuffer {
    pub fn new(bytes: usize) -> Result<Self> {
        let mut ptr = 0;
        // SAFETY: out-pointer to a local.
        check(
            unsafe { sys::cuMemAlloc_v2(&mut ptr, bytes.max(1)) },
            "cuMemAlloc",
        )?;
        Ok(Self { ptr, bytes })
    }

    pub fn from_slice<T: Copy>(values: &[T]) -> Result<Self> {
        let buffer = Self::new(std::mem::size_of_val(values))?;
        buffer.write(values)?;
        Ok(buffer)
    }

    pub fn write<T: Copy>(&self, values: &[T]) -> Result<()> {
        copy_to_device(self.ptr, values)
    }

    pub fn read<T: Copy + Default>(&self, count: usize) -> Result<Vec<T>> {
        copy_from_device(self.ptr, count)
    }

    /// `read` without waiting for the context's work first: only for a
    /// caller that has just synchronized every stream that writes the
    /// buffer (the peer-timeout flag after a call's synchronize).
    pub fn read_synchronized<T: Copy + Default>(&self, count: usize) -> Result<Vec<T>> {
        copy_to_host(self.ptr, count)
    }

    /// Zeroes the buffer and returns once it is zero. `cuMemsetD8` runs on
    /// the legacy stream, which the runtime's non-blocking streams do not
    /// wait for, and may return before it has run: without the
    /// synchronize, work queued right after on another stream can run
    /// first and have its writes zeroed (it did: the matmul-pair GPU
    /// test's graph replay, with 4 and 8 ranks sharing one GPU; and a
    /// peer timeout flagged right after `check_peers` cleared the flag
    /// could have been lost the same way).
    pub fn zero(&self) -> Result<()> {
        // SAFETY: the range is ours.
        check(
            unsafe { sys::cuMemsetD8_v2(self.ptr, 0, self.bytes) },
            "cuMemsetD8",
        )?;
        // SAFETY: a current context exists (the memset just used it).
        check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc in `new`.
        unsafe {
            sys::cuMemFree_v2(self.ptr);
        }
    }
}

/// Copies `values` to `dst` and returns once they are there. A copy from
/// pageable memory returns when its data is staged, its DMA still in
/// flight on the legacy stream, which the runtime's non-blocking streams do
/// not wait for: without the synchronize, work queued right after could
/// read the old contents (it did: a compiled layer read the previous
/// call's 1 MB input).
pub fn copy_to_device<T: Copy>(dst: CUdeviceptr, values: &[T]) -> Result<()> {
    // SAFETY: `values` is a live host slice of the given byte length.
    check(
        unsafe { sys::cuMemcpyHtoD_v2(dst, values.as_ptr().cast(), std::mem::size_of_val(values)) },
        "cuMemcpyHtoD",
    )?;
    // SAFETY: a current context exists (the copy just used it).
    check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")
}

/// Runs `f` with this thread's stream-capture mode relaxed, so that it may
/// allocate, load modules and copy while a stream of this thread captures
/// a CUDA graph; none of it becomes part of the graph.
pub fn outside_capture<T>(f: impl FnOnce() -> Result<T>) -> Result<T> {
    let mut mode = sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED;
    // SAFETY: exchanges this thread's mode with a local.
    check(
        unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) },
        "cuThreadExchangeStreamCaptureMode",
    )?;
    let result = f();
    // SAFETY: puts the thread's previous mode back.
    let restored = check(
        unsafe { sys::cuThreadExchangeStreamCaptureMode(&mut mode) },
        "cuThreadExchangeStreamCaptureMode",
    );
    let value = result?;
    restored?;
    Ok(value)
}

/// Device memory holding `values`, made even while a graph is being
/// captured (`outside_capture`; the copy runs on a private non-blocking
/// stream, which no capture can join): for what kernels in a graph read
/// and the graph must not own, such as the descriptor made at a buffer's
/// first collective, which may be a captured one.
pub fn device_slice_outside_capture<T: Copy>(values: &[T]) -> Result<DeviceBuffer> {
    outside_capture(|| {
        let buffer = DeviceBuffer::new(std::mem::size_of_val(values))?;
        let stream = Stream::new()?;
        // SAFETY: `values` is a live host slice of this length, and the
        // stream is synchronized before it goes.
        check(
            unsafe {
                sys::cuMemcpyHtoDAsync_v2(
                    buffer.ptr,
                    values.as_ptr().cast(),
                    std::mem::size_of_val(values),
                    stream.raw,
                )
            },
            "cuMemcpyHtoDAsync",
        )?;
        stream.synchronize()?;
        Ok(buffer)
    })
}

/// Copies `count` elements at `src` to the host, after all work queued so
/// far in this context: the copy runs on the legacy stream, which does not
/// wait for non-blocking streams (the runtime's, an application's), so
/// without the synchronize a read right after an asynchronous call (say
/// `symm_copy_to_host` after a `NAME_async` entry point) could return the
/// old contents.
pub fn copy_from_device<T: Copy + Default>(src: CUdeviceptr, count: usize) -> Result<Vec<T>> {
    // SAFETY: a context is current for every caller (the runtime binds it).
    check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")?;
    copy_to_host(src, count)
}

/// The copy of `copy_from_device`, in no order with non-blocking streams.
fn copy_to_host<T: Copy + Default>(src: CUdeviceptr, count: usize) -> Result<Vec<T>> {
    let mut values = vec![T::default(); count];
    // SAFETY: `values` has room for `count` elements.
    check(
        unsafe {
            sys::cuMemcpyDtoH_v2(
                values.as_mut_ptr().cast(),
                src,
                count * std::mem::size_of::<T>(),
            )
        },
        "cuMemcpyDtoH",
    )?;
    Ok(values)
}

/// Kernels compiled from PTX on first use, by entry name.
#[derive(Default)]
pub struct KernelCache {
    modules: Mutex<HashMap<String, (sys::CUmodule, sys::CUfunction)>>,
}

// SAFETY: module and function handles are plain driver handles.
unsafe impl Send for KernelCache {}
unsafe impl Sync for KernelCache {}

impl KernelCache {
    /// The function `name`, loading `ptx()` the first time.
    pub fn get(&self, name: &str, ptx: impl FnOnce() -> String) -> Result<sys::CUfunction> {
        let mut modules = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(&(_, function)) = modules.get(name) {
            return Ok(function);
        }
        let text = CString::new(ptx()).map_err(|_| Error::Cuda("PTX holds a NUL".into()))?;
        let entry =
            CString::new(name).map_err(|_| Error::Cuda("kernel name holds a NUL".into()))?;
        // A kernel's first launch may be in a graph being captured.
        // SAFETY: NUL-terminated PTX and entry name; out-pointers to locals.
        outside_capture(|| unsafe {
            let mut module = std::ptr::null_mut();
            check(
                sys::cuModuleLoadData(&mut module, text.as_ptr().cast()),
                &format!("cuModuleLoadData({name})"),
            )?;
            let mut function = std::ptr::null_mut();
            check(
                sys::cuModuleGetFunction(&mut function, module, entry.as_ptr()),
                &format!("cuModuleGetFunction({name})"),
            )?;
            modules.insert(name.to_owned(), (module, function));
            Ok(function)
        })
    }
}

/// Launches `function` on `stream` with the given argument pointers.
///
/// # Safety
/// `function` and `stream` are live driver handles and `args` point at
/// values matching the kernel's parameters.
pub unsafe fn launch(
    function: sys::CUfunction,
    blocks: u32,
    threads: u32,
    stream: CUstream,
    args: &mut [*mut c_void],
) -> Result<()> {
    // SAFETY: `args` point at live values matching the kernel's parameters.
    check(
        unsafe {
            sys::cuLaunchKernel(
                function,
                blocks,
                1,
                1,
                threads,
                1,
                1,
                0,
                stream,
                args.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        },
        "cuLaunchKernel",
    )
}

/// A stream-ordered memory pool on one device that keeps what is freed
/// into it. The device's default pool hands its memory back to the driver
/// at every synchronize (release threshold 0), so a compiled function that
/// allocates and frees a temporary per call paid a fresh mapping each call.
pub struct MemPool {
    raw: sys::CUmemoryPool,
}

impl MemPool {
    pub fn new(device: i32) -> Result<Self> {
        // SAFETY: plain-old-data properties, zeroed then filled in; out-
        // pointers to locals.
        unsafe {
            let mut props: sys::CUmemPoolProps = std::mem::zeroed();
            props.allocType = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
            props.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
            props.location.id = device;
            let mut raw = std::ptr::null_mut();
            check(sys::cuMemPoolCreate(&mut raw, &props), "cuMemPoolCreate")?;
            let pool = Self { raw };
            let mut keep_all = u64::MAX;
            check(
                sys::cuMemPoolSetAttribute(
                    pool.raw,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    (&mut keep_all as *mut u64).cast(),
                ),
                "cuMemPoolSetAttribute(release threshold)",
            )?;
            Ok(pool)
        }
    }

    /// `bytes` ordered on `stream`; free with `cuMemFreeAsync`.
    pub fn alloc(&self, bytes: usize, stream: &Stream) -> Result<CUdeviceptr> {
        let mut pointer = 0;
        // SAFETY: a live pool and stream; out-pointer to a local.
        check(
            unsafe { sys::cuMemAllocFromPoolAsync(&mut pointer, bytes, self.raw, stream.raw) },
            "cuMemAllocFromPoolAsync",
        )?;
        Ok(pointer)
    }
}

impl Drop for MemPool {
    fn drop(&mut self) {
        // SAFETY: created in `new`; the driver defers the destruction until
        // outstanding allocations are freed.
        unsafe {
            sys::cuMemPoolDestroy(self.raw);
        }
    }
}

/// `CU_STREAM_LEGACY`: the handle of the legacy default stream (cuda.h
/// defines it as `((CUstream)0x1)`).
pub const LEGACY_STREAM: usize = 0x1;

/// A stream of our own (capture needs one other than the legacy default).
pub struct Stream {
    pub raw: CUstream,
    /// Whether dropping it destroys the stream (not for the caller's).
    owned: bool,
}

impl Stream {
    pub fn new() -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(
            unsafe {
                sys::cuStreamCreate(&mut raw, sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32)
            },
            "cuStreamCreate",
        )?;
        Ok(Self { raw, owned: true })
    }

    /// A stream the caller owns (an application's), used but not destroyed.
    pub fn borrowed(raw: CUstream) -> Self {
        Self { raw, owned: false }
    }

    /// Whether this is the legacy default stream (`CU_STREAM_LEGACY`, or
    /// NULL where the caller means it), which synchronizes with every
    /// blocking stream and cannot be captured into a graph.
    pub fn is_legacy(&self) -> bool {
        self.raw.is_null() || self.raw as usize == LEGACY_STREAM
    }

    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live stream.
        check(
            unsafe { sys::cuStreamSynchronize(self.raw) },
            "cuStreamSynchronize",
        )
    }

    /// Whether work on this stream is being captured into a graph.
    pub fn is_capturing(&self) -> Result<bool> {
        let mut status = sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
        // SAFETY: a live stream; out-pointer to a local.
        check(
            unsafe { sys::cuStreamIsCapturing(self.raw, &mut status) },
            "cuStreamIsCapturing",
        )?;
        Ok(status != sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE)
    }

    /// Later work on this stream waits for `event`'s last record.
    pub fn wait(&self, event: &Event) -> Result<()> {
        // SAFETY: a live stream and event.
        check(
            unsafe { sys::cuStreamWaitEvent(self.raw, event.raw, 0) },
            "cuStreamWaitEvent",
        )
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.owned {
            return;
        }
        // SAFETY: created in `new`.
        unsafe {
            sys::cuStreamDestroy_v2(self.raw);
        }
    }
}

/// A captured CUDA graph, instantiated for replay.
pub struct Graph {
    graph: sys::CUgraph,
    exec: sys::CUgraphExec,
}

impl Graph {
    /// Starts capturing `stream`; pair with [`Graph::end_capture`].
    pub fn begin_capture(stream: &Stream) -> Result<()> {
        // SAFETY: capture on a stream we own.
        check(
            unsafe {
                sys::cuStreamBeginCapture_v2(
                    stream.raw,
                    sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                )
            },
            "cuStreamBeginCapture",
        )
    }

    /// Ends the capture begun on `stream` and instantiates the graph.
    pub fn end_capture(stream: &Stream) -> Result<Self> {
        // SAFETY: ends a capture begun by `begin_capture`.
        unsafe {
            let mut graph = std::ptr::null_mut();
            check(
                sys::cuStreamEndCapture(stream.raw, &mut graph),
                "cuStreamEndCapture",
            )?;
            let mut exec = std::ptr::null_mut();
            if let Err(error) = check(
                sys::cuGraphInstantiateWithFlags(&mut exec, graph, 0),
                "cuGraphInstantiate",
            ) {
                sys::cuGraphDestroy(graph);
                return Err(error);
            }
            Ok(Self { graph, exec })
        }
    }

    /// Captures what `body` enqueues on `stream` (nothing runs yet).
    pub fn capture(stream: &Stream, body: impl FnOnce() -> Result<()>) -> Result<Self> {
        Self::begin_capture(stream)?;
        let result = body();
        let graph = Self::end_capture(stream);
        result?;
        graph
    }

    /// The graph as captured (its nodes stay the graph's).
    pub fn raw(&self) -> sys::CUgraph {
        self.graph
    }

    pub fn replay(&self, stream: &Stream) -> Result<()> {
        // SAFETY: an instantiated graph on a live stream.
        check(
            unsafe { sys::cuGraphLaunch(self.exec, stream.raw) },
            "cuGraphLaunch",
        )
    }
}

impl Drop for Graph {
    fn drop(&mut self) {
        // SAFETY: created in `capture`.
        unsafe {
            sys::cuGraphExecDestroy(self.exec);
            sys::cuGraphDestroy(self.graph);
        }
    }
}

/// A CUDA event: a timing event, or a lighter one that only orders streams.
pub struct Event {
    raw: sys::CUevent,
}

impl Event {
    /// An event that can time (see [`Event::elapsed_ms`]).
    pub fn new() -> Result<Self> {
        Self::with_flags(sys::CUevent_flags::CU_EVENT_DEFAULT)
    }

    /// An event for ordering streams only; recording it skips the timestamp.
    pub fn ordering() -> Result<Self> {
        Self::with_flags(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING)
    }

    fn with_flags(flags: sys::CUevent_flags) -> Result<Self> {
        let mut raw = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check(
            unsafe { sys::cuEventCreate(&mut raw, flags as u32) },
            "cuEventCreate",
        )?;
        Ok(Self { raw })
    }

    pub fn record(&self, stream: &Stream) -> Result<()> {
        // SAFETY: live event and stream.
        check(
            unsafe { sys::cuEventRecord(self.raw, stream.raw) },
            "cuEventRecord",
        )
    }

    /// Whether the work before the event's last record has run (without
    /// waiting); an error of that work comes back here.
    pub fn completed(&self) -> Result<bool> {
        // SAFETY: a live event.
        match unsafe { sys::cuEventQuery(self.raw) } {
            CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            status => check(status, "cuEventQuery").map(|()| true),
        }
    }

    /// Waits until the work before the event's last record has run.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: a live event.
        check(
            unsafe { sys::cuEventSynchronize(self.raw) },
            "cuEventSynchronize",
        )
    }

    /// Milliseconds from `self` to `end`, once both have completed.
    pub fn elapsed_ms(&self, end: &Event) -> Result<f32> {
        let mut ms = 0f32;
        // SAFETY: both events were recorded; out-pointer to a local.
        unsafe {
            check(sys::cuEventSynchronize(end.raw), "cuEventSynchronize")?;
            check(
                sys::cuEventElapsedTime_v2(&mut ms, self.raw, end.raw),
                "cuEventElapsedTime",
            )?;
        }
        Ok(ms)
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created in `new`.
        unsafe {
            sys::cuEventDestroy_v2(self.raw);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_driver_error_keeps_its_status_and_wording() {
        let error = check(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS, "cuStreamSynchronize").unwrap_err();
        assert_eq!(
            error.driver_status(),
            Some(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
        );
        assert_eq!(
            error.to_string(),
            "CUDA: cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS"
        );
        // A hint keeps the status underneath.
        let hinted = error.hinted("set SYMM_CUDA_GRAPHS=0");
        assert_eq!(
            hinted.driver_status(),
            Some(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS)
        );
        assert_eq!(
            hinted.to_string(),
            "CUDA: cuStreamSynchronize failed: CUDA_ERROR_ILLEGAL_ADDRESS (set SYMM_CUDA_GRAPHS=0)"
        );
        assert_eq!(Error::Cuda("no device".into()).driver_status(), None);
    }

    #[test]
    fn the_sticky_error_is_appended_unless_it_is_the_errors_own() {
        let illegal = CUresult::CUDA_ERROR_ILLEGAL_ADDRESS;
        // The error's own status: nothing to add.
        assert_eq!(with_sticky_error("m".into(), Some(illegal), illegal), "m");
        // A healthy context, or none: nothing to add.
        assert_eq!(
            with_sticky_error("m".into(), None, CUresult::CUDA_SUCCESS),
            "m"
        );
        assert_eq!(
            with_sticky_error("m".into(), None, CUresult::CUDA_ERROR_INVALID_CONTEXT),
            "m"
        );
        // Another call's failure after a fault: the fault is named.
        assert_eq!(
            with_sticky_error(
                "cuBLAS failed".into(),
                Some(CUresult::CUDA_ERROR_LAUNCH_FAILED),
                illegal
            ),
            "cuBLAS failed (the GPU context reports CUDA_ERROR_ILLEGAL_ADDRESS: an earlier kernel failed)"
        );
        assert_eq!(
            with_sticky_error("cuBLAS failed".into(), None, illegal),
            "cuBLAS failed (the GPU context reports CUDA_ERROR_ILLEGAL_ADDRESS: an earlier kernel failed)"
        );
    }

    #[test]
    fn the_legacy_stream_is_its_handle_or_null() {
        // Borrowed handles are never destroyed, so no driver call happens.
        assert!(Stream::borrowed(LEGACY_STREAM as CUstream).is_legacy());
        assert!(Stream::borrowed(std::ptr::null_mut()).is_legacy());
        // CU_STREAM_PER_THREAD (0x2) and an ordinary handle are not.
        assert!(!Stream::borrowed(0x2 as CUstream).is_legacy());
        assert!(!Stream::borrowed(0x7f00_1234_5000 as CUstream).is_legacy());
    }
}
