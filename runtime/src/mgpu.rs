//! MLIR's GPU runtime ABI (`mgpu*`, the LLVM 22 signatures that
//! `gpu-to-llvm` emits calls to), implemented on the CUDA driver through
//! cudarc, so compiled programs link against this runtime alone. Like
//! MLIR's own CudaRuntimeWrappers, each call makes the default device's
//! primary context current first. The ABI has no error channel: a failure
//! is the running compiled call's failure (`compiled_call`), so the rest of
//! the call is skipped and its entry point fails; outside a call (modules
//! load from a global constructor) it ends the process with the message.

#![allow(clippy::missing_safety_doc)]

use crate::kernel_facts;
use cudarc::driver::sys::{self, CUresult};
use std::{
    cell::Cell,
    ffi::{c_char, c_void},
};

thread_local! {
    /// Per thread, as in MLIR's wrappers: one thread per GPU works. It
    /// starts at the launcher's LOCAL_RANK, because compiled objects load
    /// their kernels from a global constructor, before `main` can say.
    static DEFAULT_DEVICE: Cell<i32> = Cell::new(
        std::env::var("LOCAL_RANK").ok().and_then(|v| v.parse().ok()).unwrap_or(0),
    );
    /// The stream of the compiled function running on this thread (see
    /// `compiled::symm_rt_enter`): lowered launches go there, in order with
    /// the runtime's own work, and their synchronizations wait for the
    /// function's exit instead.
    static CURRENT_STREAM: Cell<sys::CUstream> = const { Cell::new(std::ptr::null_mut()) };
}

/// Routes this thread's lowered launches to `stream` (null: back to a
/// stream per launch, as MLIR's wrappers do).
pub(crate) fn set_current_stream(stream: sys::CUstream) {
    CURRENT_STREAM.with(|current| current.set(stream));
}

fn is_current(stream: sys::CUstream) -> bool {
    !stream.is_null() && CURRENT_STREAM.with(Cell::get) == stream
}

fn report(status: CUresult, what: &str) {
    if status != CUresult::CUDA_SUCCESS {
        crate::compiled_call::failed(
            what,
            &crate::cuda::with_context_error(format!("{status:?}"), Some(status)),
        );
    }
}

thread_local! {
    /// The primary context this thread retained, and for which device: one
    /// retain per device, not one per launch.
    static RETAINED: Cell<Option<(i32, sys::CUcontext)>> = const { Cell::new(None) };
}

/// Makes the default device's primary context current.
fn scoped_context() {
    let ordinal = DEFAULT_DEVICE.with(Cell::get);
    let context = match RETAINED.with(Cell::get) {
        Some((device, context)) if device == ordinal => context,
        _ => {
            // SAFETY: plain driver calls with out-pointers to locals; the
            // primary context stays retained for the thread's life.
            unsafe {
                report(sys::cuInit(0), "cuInit");
                let mut device = 0;
                report(sys::cuDeviceGet(&mut device, ordinal), "cuDeviceGet");
                let mut context = std::ptr::null_mut();
                report(
                    sys::cuDevicePrimaryCtxRetain(&mut context, device),
                    "cuDevicePrimaryCtxRetain",
                );
                if !context.is_null() {
                    RETAINED.with(|retained| retained.set(Some((ordinal, context))));
                }
                context
            }
        }
    };
    // SAFETY: a retained primary context.
    report(unsafe { sys::cuCtxSetCurrent(context) }, "cuCtxSetCurrent");
}

#[unsafe(no_mangle)]
pub extern "C" fn mgpuSetDefaultDevice(device: i32) {
    DEFAULT_DEVICE.with(|d| d.set(device));
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuModuleLoad(data: *const c_void, _size: i64) -> sys::CUmodule {
    // Compiled objects load their kernels from a global constructor: on a
    // machine without CUDA the program must still start (and say so).
    if crate::cuda::device_count() == 0 {
        return std::ptr::null_mut();
    }
    scoped_context();
    // The JIT's own words go into the message when the PTX is refused.
    const LOG_BYTES: usize = 8192;
    let mut log = vec![0u8; LOG_BYTES];
    let mut options = [
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        sys::CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    let mut values = [log.as_mut_ptr().cast::<c_void>(), LOG_BYTES as *mut c_void];
    let mut module = std::ptr::null_mut();
    // SAFETY: `data` is the embedded image (PTX or cubin); the options
    // point at a log buffer of LOG_BYTES that outlives the call.
    let status = unsafe {
        sys::cuModuleLoadDataEx(
            &mut module,
            data,
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
        )
    };
    if status != CUresult::CUDA_SUCCESS {
        let end = log.iter().position(|b| *b == 0).unwrap_or(log.len());
        let log = String::from_utf8_lossy(&log[..end]);
        crate::compiled_call::failed(
            "loading the compiled program's GPU kernels",
            &format!(
                "{status:?}{}{}",
                if log.is_empty() { "" } else { ": " },
                log.trim()
            ),
        );
        return std::ptr::null_mut();
    }
    module
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuModuleLoadJIT(data: *const c_void, _opt_level: i32) -> sys::CUmodule {
    // SAFETY: as mgpuModuleLoad; the driver JIT-compiles PTX itself.
    unsafe { mgpuModuleLoad(data, 0) }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuModuleUnload(module: sys::CUmodule) {
    if module.is_null() {
        return;
    }
    crate::programmatic_launch::forget(module);
    if let Ok(mut cache) = kernel_facts::cache().lock() {
        cache.forget(module);
    }
    // SAFETY: a module from mgpuModuleLoad.
    let status = unsafe { sys::cuModuleUnload(module) };
    // Global destructors run after the driver has shut down at exit; the
    // module went with it.
    if status != CUresult::CUDA_ERROR_DEINITIALIZED {
        report(status, "cuModuleUnload");
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuModuleGetFunction(
    module: sys::CUmodule,
    name: *const c_char,
) -> sys::CUfunction {
    if crate::compiled_call::has_failed() {
        return std::ptr::null_mut();
    }
    let found = match kernel_facts::cache().lock() {
        Ok(mut cache) => cache.function(&kernel_facts::Cuda, module, name),
        Err(_) => {
            crate::compiled_call::failed(
                "finding a kernel in the compiled program's GPU module",
                "the runtime's table of kernels was poisoned by a panic",
            );
            return std::ptr::null_mut();
        }
    };
    found.unwrap_or_else(|error| {
        // SAFETY: NUL-terminated, from the compiled code.
        let name = unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy();
        crate::compiled_call::failed(
            &format!("finding kernel {name} in the compiled program's GPU module"),
            &format!("{:?}", error.status),
        );
        std::ptr::null_mut()
    })
}

#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn mgpuLaunchKernel(
    function: sys::CUfunction,
    grid_x: i64,
    grid_y: i64,
    grid_z: i64,
    block_x: i64,
    block_y: i64,
    block_z: i64,
    shared_memory: i32,
    stream: sys::CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    _params_count: i64,
) {
    // After a failure in this call nothing more runs on its data.
    if crate::compiled_call::has_failed() {
        return;
    }
    scoped_context();
    // Where the static and the dynamic shared memory together pass 48 KB,
    // the dynamic part must be allowed first (`kernel_facts`: once per
    // kernel and size).
    if shared_memory > 0 {
        let allowed = match kernel_facts::cache().lock() {
            Ok(mut cache) => cache.allow_shared(&kernel_facts::Cuda, function, shared_memory),
            Err(_) => Err(kernel_facts::Failed {
                status: CUresult::CUDA_ERROR_UNKNOWN,
                call: "the runtime's table of kernels (poisoned by a panic)",
            }),
        };
        if let Err(failed) = allowed {
            report(failed.status, failed.call);
            return;
        }
    }
    let (grid, block) = (
        [grid_x as u32, grid_y as u32, grid_z as u32],
        [block_x as u32, block_y as u32, block_z as u32],
    );
    let follows_library = crate::programmatic_launch::follows_library_kernel()
        && !crate::programmatic_launch::after_library_allowed(shared_memory as u64, || {
            // A failed query counts as a capture (the ordinary launch).
            crate::cuda::Stream::borrowed(stream)
                .is_capturing()
                .unwrap_or(true)
        });
    // SAFETY: the lowering passes a live function.
    if !follows_library && unsafe { crate::programmatic_launch::allowed(function) } {
        // SAFETY: as below; the module's kernels wait for prior grids.
        let status = unsafe {
            crate::programmatic_launch::launch(
                function,
                grid,
                block,
                shared_memory as u32,
                stream,
                params,
                extra,
            )
        };
        report(status, "cuLaunchKernelEx (programmatic dependent launch)");
        return;
    }
    // SAFETY: the lowering passes a live function and matching params.
    report(
        unsafe {
            sys::cuLaunchKernel(
                function,
                grid[0],
                grid[1],
                grid[2],
                block[0],
                block[1],
                block[2],
                shared_memory as u32,
                stream,
                params,
                extra,
            )
        },
        "cuLaunchKernel",
    );
}

#[unsafe(no_mangle)]
pub extern "C" fn mgpuStreamCreate() -> sys::CUstream {
    scoped_context();
    let current = CURRENT_STREAM.with(Cell::get);
    if !current.is_null() {
        return current;
    }
    let mut stream = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    report(
        unsafe {
            sys::cuStreamCreate(
                &mut stream,
                sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
            )
        },
        "cuStreamCreate",
    );
    stream
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuStreamDestroy(stream: sys::CUstream) {
    if is_current(stream) {
        return;
    }
    // SAFETY: a stream from mgpuStreamCreate.
    report(
        unsafe { sys::cuStreamDestroy_v2(stream) },
        "cuStreamDestroy",
    );
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuStreamSynchronize(stream: sys::CUstream) {
    if is_current(stream) {
        return;
    }
    // SAFETY: a live stream.
    report(
        unsafe { sys::cuStreamSynchronize(stream) },
        "cuStreamSynchronize",
    );
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuStreamWaitEvent(stream: sys::CUstream, event: sys::CUevent) {
    // SAFETY: live stream and event.
    report(
        unsafe { sys::cuStreamWaitEvent(stream, event, 0) },
        "cuStreamWaitEvent",
    );
}

#[unsafe(no_mangle)]
pub extern "C" fn mgpuEventCreate() -> sys::CUevent {
    scoped_context();
    let mut event = std::ptr::null_mut();
    // SAFETY: out-pointer to a local.
    report(
        unsafe {
            sys::cuEventCreate(
                &mut event,
                sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
            )
        },
        "cuEventCreate",
    );
    event
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuEventDestroy(event: sys::CUevent) {
    // SAFETY: an event from mgpuEventCreate.
    report(unsafe { sys::cuEventDestroy_v2(event) }, "cuEventDestroy");
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuEventSynchronize(event: sys::CUevent) {
    // SAFETY: a live event.
    report(
        unsafe { sys::cuEventSynchronize(event) },
        "cuEventSynchronize",
    );
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuEventRecord(event: sys::CUevent, stream: sys::CUstream) {
    // SAFETY: live event and stream.
    report(
        unsafe { sys::cuEventRecord(event, stream) },
        "cuEventRecord",
    );
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuMemAlloc(
    bytes: u64,
    stream: sys::CUstream,
    host_shared: bool,
) -> *mut c_void {
    scoped_context();
    let mut pointer: sys::CUdeviceptr = 0;
    if bytes == 0 {
        return std::ptr::null_mut();
    }
    // SAFETY: out-pointer to a local; ordered on `stream` when given.
    unsafe {
        if host_shared {
            report(
                sys::cuMemAllocManaged(
                    &mut pointer,
                    bytes as usize,
                    sys::CUmemAttach_flags::CU_MEM_ATTACH_GLOBAL as u32,
                ),
                "cuMemAllocManaged",
            );
        } else if stream.is_null() {
            report(
                sys::cuMemAlloc_v2(&mut pointer, bytes as usize),
                "cuMemAlloc",
            );
        } else {
            report(
                sys::cuMemAllocAsync(&mut pointer, bytes as usize, stream),
                "cuMemAllocAsync",
            );
        }
    }
    pointer as *mut c_void
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuMemFree(pointer: *mut c_void, stream: sys::CUstream) {
    if pointer.is_null() {
        return;
    }
    // SAFETY: memory from mgpuMemAlloc.
    unsafe {
        if stream.is_null() {
            report(sys::cuMemFree_v2(pointer as sys::CUdeviceptr), "cuMemFree");
        } else {
            report(
                sys::cuMemFreeAsync(pointer as sys::CUdeviceptr, stream),
                "cuMemFreeAsync",
            );
        }
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuMemcpy(
    dst: *mut c_void,
    src: *mut c_void,
    bytes: u64,
    stream: sys::CUstream,
) {
    // SAFETY: unified addressing: the driver resolves host/device pointers.
    report(
        unsafe {
            sys::cuMemcpyAsync(
                dst as sys::CUdeviceptr,
                src as sys::CUdeviceptr,
                bytes as usize,
                stream,
            )
        },
        "cuMemcpyAsync",
    );
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuMemset32(
    dst: *mut c_void,
    value: u32,
    count: u64,
    stream: sys::CUstream,
) {
    // SAFETY: `count` u32 words at `dst`.
    report(
        unsafe { sys::cuMemsetD32Async(dst as sys::CUdeviceptr, value, count as usize, stream) },
        "cuMemsetD32Async",
    );
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn mgpuMemset16(
    dst: *mut c_void,
    value: u16,
    count: u64,
    stream: sys::CUstream,
) {
    // SAFETY: `count` u16 words at `dst`.
    report(
        unsafe { sys::cuMemsetD16Async(dst as sys::CUdeviceptr, value, count as usize, stream) },
        "cuMemsetD16Async",
    );
}
