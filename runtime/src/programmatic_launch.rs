//! Programmatic dependent launch of a compiled program's kernels (sm_90
//! and up): a kernel's blocks may become resident while the grid before it
//! in the stream drains, once that grid lets them
//! (`griddepcontrol.launch_dependents`), and wait there for it
//! (`griddepcontrol.wait`). That is correct only for kernels that wait
//! before they touch memory, which `symm-wait-for-prior-grids` makes so
//! for every kernel of a GPU module and records in the module as the
//! global `symm_protocol::WAITS_FOR_PRIOR_GRIDS`. A module without it
//! (compiled for an older chip, or by another compiler) is launched the
//! ordinary way. `SYMM_PDL=0` launches every kernel the ordinary way.

use cudarc::driver::sys::{self, CUresult};
use std::cell::Cell;
use std::collections::HashMap;
use std::ffi::CString;
use std::sync::{Mutex, OnceLock};

thread_local! {
    /// Whether the last work this thread enqueued was a library kernel.
    static AFTER_LIBRARY_KERNEL: Cell<bool> = const { Cell::new(false) };
}

/// Says that this thread just enqueued a library kernel (cuBLAS's). Such
/// kernels may let the next grid launch early themselves; blocks of ours
/// resident beside them, waiting, would take room they need (the decoder
/// half-layer at 16 rows ran 2 µs slower so). The next launch of a compiled
/// kernel is then an ordinary one.
pub fn after_library_kernel() {
    AFTER_LIBRARY_KERNEL.with(|flag| flag.set(true));
}

/// Whether a library kernel came last (and forgets it: this launch comes
/// after it).
pub fn follows_library_kernel() -> bool {
    AFTER_LIBRARY_KERNEL.with(|flag| flag.replace(false))
}

/// The environment variable that turns programmatic launches off (`0`).
pub const ENV: &str = "SYMM_PDL";

/// The environment variable that keeps every launch right after a
/// library kernel an ordinary one (`0`; see `after_library_allowed`).
pub const AFTER_LIBRARY_ENV: &str = "SYMM_PDL_AFTER_LIBRARY";

thread_local! {
    /// Whether this thread is capturing a compiled partition's own graph
    /// (`Session::graph_begin` to `graph_end`).
    static OWN_CAPTURE: Cell<bool> = const { Cell::new(false) };
}

/// Says that this thread begins (`true`) or ends (`false`) the capture of
/// a compiled partition's own graph.
pub fn set_own_capture(on: bool) {
    OWN_CAPTURE.with(|flag| flag.set(on));
}

/// Whether a launch right after a library kernel may be programmatic
/// anyway: a kernel without dynamic shared memory (an all-reduce, a rows or
/// an element-wise kernel), where the work runs eagerly or goes into the
/// runtime's own graph (`in_application_capture` false), unless
/// `SYMM_PDL_AFTER_LIBRARY=0`. The GEMVs, which take most of an SM's shared
/// memory, would hold room the library's last blocks need while they wait.
/// On 2x H200 the decoder half-layer at 128 rows took 82.8-83.6 instead of
/// 84.8-85.6 µs a call enqueued, but inside an application's CUDA graph of
/// 10 calls 82.2-82.6 instead of 81.2-81.7, so there the launch stays
/// ordinary (bench/results/2026-11-28-pdl-after-library-h200x2.md).
pub fn after_library_allowed(
    dynamic_shared: u64,
    in_application_capture: impl Fn() -> bool,
) -> bool {
    static ALLOWED: OnceLock<bool> = OnceLock::new();
    dynamic_shared == 0
        && *ALLOWED.get_or_init(|| allowed_by(std::env::var(AFTER_LIBRARY_ENV).ok().as_deref()))
        && (OWN_CAPTURE.with(Cell::get) || !in_application_capture())
}

/// Modules (by handle) and whether they carry the marker.
fn marked_modules() -> &'static Mutex<HashMap<usize, bool>> {
    static MODULES: OnceLock<Mutex<HashMap<usize, bool>>> = OnceLock::new();
    MODULES.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Whether `SYMM_PDL` allows programmatic launches (anything but `0`).
pub fn enabled() -> bool {
    static ENABLED: OnceLock<bool> = OnceLock::new();
    *ENABLED.get_or_init(|| allowed_by(std::env::var(ENV).ok().as_deref()))
}

/// `SYMM_PDL`'s value read: unset or anything but `0` allows.
pub fn allowed_by(value: Option<&str>) -> bool {
    value.map(str::trim) != Some("0")
}

/// Whether `function` may launch programmatically: `SYMM_PDL` allows it
/// and its module says its kernels wait for prior grids.
///
/// # Safety
/// `function` is a live driver function handle.
pub unsafe fn allowed(function: sys::CUfunction) -> bool {
    // SAFETY: the caller's live function.
    enabled() && unsafe { waits_for_prior_grids(function) }
}

/// Whether `function`'s module carries the marker of
/// `symm-wait-for-prior-grids`: a kernel that symm compiled.
///
/// # Safety
/// `function` is a live driver function handle.
pub unsafe fn waits_for_prior_grids(function: sys::CUfunction) -> bool {
    let mut module = std::ptr::null_mut();
    // SAFETY: the caller's live function.
    if unsafe { sys::cuFuncGetModule(&mut module, function) } != CUresult::CUDA_SUCCESS {
        return false;
    }
    let Ok(mut modules) = marked_modules().lock() else {
        return false;
    };
    *modules.entry(module as usize).or_insert_with(|| {
        let name = CString::new(symm_protocol::WAITS_FOR_PRIOR_GRIDS).unwrap_or_default();
        let (mut pointer, mut bytes) = (0, 0);
        // SAFETY: a live module and a NUL-terminated name.
        let found =
            unsafe { sys::cuModuleGetGlobal_v2(&mut pointer, &mut bytes, module, name.as_ptr()) };
        found == CUresult::CUDA_SUCCESS
    })
}

/// Forgets `module` (unloaded: the driver may reuse its handle).
pub fn forget(module: sys::CUmodule) {
    if let Ok(mut modules) = marked_modules().lock() {
        modules.remove(&(module as usize));
    }
}

/// The id of the launch attribute that allows programmatic dependent
/// launch (programmatic stream serialization).
pub const ATTRIBUTE_ID: sys::CUlaunchAttributeID =
    sys::CUlaunchAttributeID::CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;

/// The launch attribute that allows programmatic dependent launch.
pub fn attribute() -> sys::CUlaunchAttribute {
    // SAFETY: an all-zero value is a valid value of the C union.
    let mut value: sys::CUlaunchAttributeValue = unsafe { std::mem::zeroed() };
    value.programmaticStreamSerializationAllowed = 1;
    sys::CUlaunchAttribute {
        id: ATTRIBUTE_ID,
        pad: [0; 4],
        value,
    }
}

/// `cuLaunchKernelEx` with programmatic stream serialization allowed.
///
/// # Safety
/// As `cuLaunchKernel`: a live function and stream, and `params` matching
/// the kernel's parameters.
#[allow(clippy::too_many_arguments)]
pub unsafe fn launch(
    function: sys::CUfunction,
    grid: [u32; 3],
    block: [u32; 3],
    shared_memory: u32,
    stream: sys::CUstream,
    params: *mut *mut std::ffi::c_void,
    extra: *mut *mut std::ffi::c_void,
) -> CUresult {
    let attributes = [attribute()];
    // SAFETY: the caller's guarantees.
    unsafe {
        launch_with(
            function,
            (grid, block, shared_memory),
            stream,
            &attributes,
            (params, extra),
        )
    }
}

/// `cuLaunchKernelEx` of `function` in `shape` (grid, block, dynamic
/// shared memory) on `stream` with `attributes`, and its `kernelParams`
/// and `extra` arrays.
///
/// # Safety
/// As `cuLaunchKernel`: a live function and stream, and arguments matching
/// the kernel's parameters; attributes valid for a launch.
pub unsafe fn launch_with(
    function: sys::CUfunction,
    (grid, block, shared_memory): ([u32; 3], [u32; 3], u32),
    stream: sys::CUstream,
    attributes: &[sys::CUlaunchAttribute],
    (params, extra): (*mut *mut std::ffi::c_void, *mut *mut std::ffi::c_void),
) -> CUresult {
    let config = sys::CUlaunchConfig {
        gridDimX: grid[0],
        gridDimY: grid[1],
        gridDimZ: grid[2],
        blockDimX: block[0],
        blockDimY: block[1],
        blockDimZ: block[2],
        sharedMemBytes: shared_memory,
        hStream: stream,
        // The driver reads the attributes and writes none of them.
        attrs: attributes.as_ptr() as *mut sys::CUlaunchAttribute,
        numAttrs: attributes.len() as u32,
    };
    // SAFETY: the caller's guarantees; `config` and the attributes outlive
    // the call.
    unsafe { sys::cuLaunchKernelEx(&config, function, params, extra) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_kernel_makes_only_the_next_launch_ordinary() {
        assert!(!follows_library_kernel());
        after_library_kernel();
        assert!(follows_library_kernel());
        assert!(!follows_library_kernel());
    }

    #[test]
    fn after_a_library_kernel_only_kernels_without_shared_memory_outside_an_application_capture() {
        let (capturing, not_capturing) = (|| true, || false);
        assert!(after_library_allowed(0, not_capturing));
        assert!(!after_library_allowed(1024, not_capturing));
        assert!(!after_library_allowed(0, capturing));
        set_own_capture(true);
        assert!(after_library_allowed(0, capturing));
        assert!(!after_library_allowed(1024, capturing));
        set_own_capture(false);
        assert!(!after_library_allowed(0, capturing));
    }

    #[test]
    fn only_zero_turns_programmatic_launches_off() {
        assert!(allowed_by(None));
        assert!(allowed_by(Some("1")));
        assert!(!allowed_by(Some("0")));
        assert!(!allowed_by(Some(" 0 ")));
    }
}
