//! Which compiled kernels may be launched with programmatic dependent
//! launch (PDL): those of modules that carry the compiler's marker
//! (`symm_protocol::abi::GRID_DEPENDENCY_MARKER`), whose kernels wait for
//! the grids before them first thing. `SYMM_PDL=0` turns it off (every
//! launch after the previous kernel has ended, as without the marker).

use cudarc::driver::sys;
use std::{
    collections::{HashMap, HashSet},
    sync::{LazyLock, RwLock},
};

/// Marked modules, and the functions found in them with their module (as
/// addresses, which the driver may reuse once a module is unloaded).
struct Marked {
    modules: HashSet<usize>,
    functions: HashMap<usize, usize>,
}

static MARKED: LazyLock<RwLock<Marked>> = LazyLock::new(|| {
    RwLock::new(Marked {
        modules: HashSet::new(),
        functions: HashMap::new(),
    })
});

/// `SYMM_PDL` is not `0`.
static ENABLED: LazyLock<bool> =
    LazyLock::new(|| std::env::var("SYMM_PDL").map_or(true, |value| value.trim() != "0"));

pub(super) fn mark_module(module: sys::CUmodule) {
    if let Ok(mut marked) = MARKED.write() {
        marked.modules.insert(module as usize);
    }
}

/// Records `function` as launchable with PDL when `module` is marked.
pub(super) fn found_function(module: sys::CUmodule, function: sys::CUfunction) {
    if let Ok(mut marked) = MARKED.write()
        && marked.modules.contains(&(module as usize))
    {
        marked.functions.insert(function as usize, module as usize);
    }
}

/// Forgets `module` and its functions (it is being unloaded).
pub(super) fn forget_module(module: sys::CUmodule) {
    if let Ok(mut marked) = MARKED.write() {
        let module = module as usize;
        marked.modules.remove(&module);
        marked.functions.retain(|_, of| *of != module);
    }
}

/// Whether `function` may be launched with PDL.
pub(super) fn allowed(function: sys::CUfunction) -> bool {
    *ENABLED
        && MARKED
            .read()
            .is_ok_and(|marked| marked.functions.contains_key(&(function as usize)))
}
