//! What the lowered launches (`mgpu`) ask the driver about a kernel,
//! asked once per kernel instead of at every launch.
//!
//! Code lowered by `gpu-to-llvm` looks its kernel up by name before every
//! launch (`mgpuModuleGetFunction`). A kernel with dynamic shared memory
//! also had its static shared memory read and its dynamic allowance set
//! again at every launch (`mgpuLaunchKernel`): three driver calls a launch
//! that change nothing after the first. Here:
//! - each (module, name) resolves to its function once;
//! - each function's static shared memory is read once;
//! - its dynamic allowance (`CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES`)
//!   is raised only when a launch asks for more than it was allowed.
//!
//! Entries go with their module (`forget`): once a module is unloaded the
//! driver may hand its function handles out again. Functions that did not
//! come through `function` (none of the lowered code's) are not cached.

use cudarc::driver::sys::{self, CUresult};
use std::collections::HashMap;
use std::ffi::c_char;
use std::sync::{Mutex, OnceLock};

/// Shared memory a kernel may take without opting in (its static and
/// dynamic parts together).
const DEFAULT_SHARED_BYTES: i32 = 48 * 1024;

/// Whether a launch with `dynamic` bytes of dynamic shared memory must
/// first allow them (`MAX_DYNAMIC_SHARED_SIZE_BYTES`): where they and the
/// kernel's `static_bytes` together pass the default.
pub fn needs_shared_opt_in(dynamic: i32, static_bytes: i32) -> bool {
    dynamic > DEFAULT_SHARED_BYTES - static_bytes
}

/// The driver calls behind the facts (the CUDA driver, or a test's).
pub trait Driver {
    /// `cuModuleGetFunction`.
    fn function(
        &self,
        module: sys::CUmodule,
        name: *const c_char,
    ) -> Result<sys::CUfunction, CUresult>;
    /// `cuFuncGetAttribute(SHARED_SIZE_BYTES)`.
    fn static_shared(&self, function: sys::CUfunction) -> Result<i32, CUresult>;
    /// `cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)`.
    fn allow_dynamic_shared(&self, function: sys::CUfunction, bytes: i32) -> Result<(), CUresult>;
}

/// A failed driver call and what it was.
#[derive(Debug, PartialEq, Eq)]
pub struct Failed {
    pub status: CUresult,
    pub call: &'static str,
}

/// One function's facts.
#[derive(Clone, Copy, Debug)]
struct Facts {
    module: usize,
    /// Its static shared memory, once read.
    static_shared: Option<i32>,
    /// The dynamic shared memory it has been allowed (0: the default).
    allowed_dynamic: i32,
}

/// The facts of the functions resolved so far.
#[derive(Default)]
pub struct Cache {
    /// (module, name address) to function.
    functions: HashMap<(usize, usize), usize>,
    /// Function to its facts.
    facts: HashMap<usize, Facts>,
}

impl Cache {
    /// `module`'s function `name` (a NUL-terminated string of the loaded
    /// code, which lives as long as the module), resolved once.
    pub fn function(
        &mut self,
        driver: &impl Driver,
        module: sys::CUmodule,
        name: *const c_char,
    ) -> Result<sys::CUfunction, Failed> {
        let key = (module as usize, name as usize);
        if let Some(function) = self.functions.get(&key) {
            return Ok(*function as sys::CUfunction);
        }
        let function = driver.function(module, name).map_err(|status| Failed {
            status,
            call: "cuModuleGetFunction",
        })?;
        self.functions.insert(key, function as usize);
        self.facts.entry(function as usize).or_insert(Facts {
            module: module as usize,
            static_shared: None,
            allowed_dynamic: 0,
        });
        Ok(function)
    }

    /// Makes `function` able to take `dynamic` bytes of dynamic shared
    /// memory: where its static and dynamic parts together pass 48 KB,
    /// the dynamic part must be allowed first. A function this cache did
    /// not resolve asks the driver every time.
    pub fn allow_shared(
        &mut self,
        driver: &impl Driver,
        function: sys::CUfunction,
        dynamic: i32,
    ) -> Result<(), Failed> {
        if dynamic <= 0 {
            return Ok(());
        }
        // A function this cache resolved keeps what it learns; another
        // learns nothing (its facts stay `None`).
        let mut facts = self.facts.get_mut(&(function as usize));
        let static_bytes = match facts.as_ref().and_then(|f| f.static_shared) {
            Some(bytes) => bytes,
            None => driver.static_shared(function).map_err(|status| Failed {
                status,
                call: "cuFuncGetAttribute(SHARED_SIZE_BYTES)",
            })?,
        };
        if let Some(facts) = facts.as_deref_mut() {
            facts.static_shared = Some(static_bytes);
        }
        let allowed = facts.as_ref().map_or(0, |f| f.allowed_dynamic);
        if needs_shared_opt_in(dynamic, static_bytes) && dynamic > allowed {
            driver
                .allow_dynamic_shared(function, dynamic)
                .map_err(|status| Failed {
                    status,
                    call: "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)",
                })?;
            if let Some(facts) = facts {
                facts.allowed_dynamic = dynamic;
            }
        }
        Ok(())
    }

    /// Drops `module`'s functions and their facts.
    pub fn forget(&mut self, module: sys::CUmodule) {
        let module = module as usize;
        self.functions.retain(|(m, _), _| *m != module);
        self.facts.retain(|_, facts| facts.module != module);
    }
}

/// The process's cache (lowered launches come from any thread).
pub fn cache() -> &'static Mutex<Cache> {
    static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
    CACHE.get_or_init(Mutex::default)
}

/// The CUDA driver.
pub struct Cuda;

impl Driver for Cuda {
    fn function(
        &self,
        module: sys::CUmodule,
        name: *const c_char,
    ) -> Result<sys::CUfunction, CUresult> {
        let mut function = std::ptr::null_mut();
        // SAFETY: a live module and a NUL-terminated name (the caller's).
        match unsafe { sys::cuModuleGetFunction(&mut function, module, name) } {
            CUresult::CUDA_SUCCESS => Ok(function),
            status => Err(status),
        }
    }

    fn static_shared(&self, function: sys::CUfunction) -> Result<i32, CUresult> {
        let mut bytes = 0i32;
        // SAFETY: a live function; the attribute is an int.
        match unsafe {
            sys::cuFuncGetAttribute(
                &mut bytes,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
                function,
            )
        } {
            CUresult::CUDA_SUCCESS => Ok(bytes),
            status => Err(status),
        }
    }

    fn allow_dynamic_shared(&self, function: sys::CUfunction, bytes: i32) -> Result<(), CUresult> {
        // SAFETY: a live function; the attribute takes a byte count.
        match unsafe {
            sys::cuFuncSetAttribute(
                function,
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                bytes,
            )
        } {
            CUresult::CUDA_SUCCESS => Ok(()),
            status => Err(status),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// A driver that counts its calls: functions are `module * 100 + the
    /// name's first byte`, each with `static_bytes` of static shared memory.
    #[derive(Default)]
    struct Counting {
        calls: RefCell<Vec<&'static str>>,
        allowed: RefCell<Vec<(usize, i32)>>,
        static_bytes: i32,
        fail_lookup: bool,
    }

    impl Driver for Counting {
        fn function(
            &self,
            module: sys::CUmodule,
            name: *const c_char,
        ) -> Result<sys::CUfunction, CUresult> {
            self.calls.borrow_mut().push("function");
            if self.fail_lookup {
                return Err(CUresult::CUDA_ERROR_NOT_FOUND);
            }
            // SAFETY: the tests' NUL-terminated names.
            let first = unsafe { *name } as usize;
            Ok((module as usize * 100 + first) as sys::CUfunction)
        }
        fn static_shared(&self, _: sys::CUfunction) -> Result<i32, CUresult> {
            self.calls.borrow_mut().push("static");
            Ok(self.static_bytes)
        }
        fn allow_dynamic_shared(
            &self,
            function: sys::CUfunction,
            bytes: i32,
        ) -> Result<(), CUresult> {
            self.calls.borrow_mut().push("allow");
            self.allowed.borrow_mut().push((function as usize, bytes));
            Ok(())
        }
    }

    const A: &[u8] = b"a\0";
    const B: &[u8] = b"b\0";

    fn module(n: usize) -> sys::CUmodule {
        n as sys::CUmodule
    }

    /// A counting driver whose kernels have `static_bytes` of static
    /// shared memory.
    fn counting(static_bytes: i32) -> Counting {
        Counting {
            static_bytes,
            ..Counting::default()
        }
    }

    /// Module `n`'s kernel "a", through `cache`.
    fn resolved(driver: &Counting, cache: &mut Cache, n: usize) -> sys::CUfunction {
        cache
            .function(driver, module(n), A.as_ptr().cast())
            .unwrap()
    }

    #[test]
    fn a_function_is_resolved_once_per_module_and_name() {
        let (driver, mut cache) = (Counting::default(), Cache::default());
        let a = A.as_ptr().cast::<c_char>();
        let b = B.as_ptr().cast::<c_char>();
        let first = cache.function(&driver, module(1), a).unwrap();
        assert_eq!(cache.function(&driver, module(1), a).unwrap(), first);
        assert_ne!(cache.function(&driver, module(1), b).unwrap(), first);
        assert_ne!(cache.function(&driver, module(2), a).unwrap(), first);
        assert_eq!(driver.calls.borrow().len(), 3);
    }

    #[test]
    fn the_dynamic_allowance_is_set_only_when_a_launch_needs_more() {
        let (driver, mut cache) = (counting(512), Cache::default());
        let f = resolved(&driver, &mut cache, 1);
        // Under 48 KB with the static part: nothing to allow.
        cache.allow_shared(&driver, f, 40 * 1024).unwrap();
        // Past it: allowed once, then not again for the same or less.
        for bytes in [100_000, 100_000, 60_000, 100_000] {
            cache.allow_shared(&driver, f, bytes).unwrap();
        }
        // More than allowed: raised.
        cache.allow_shared(&driver, f, 200_000).unwrap();
        // No dynamic shared memory: no call at all.
        cache.allow_shared(&driver, f, 0).unwrap();
        assert_eq!(
            *driver.allowed.borrow(),
            [(f as usize, 100_000), (f as usize, 200_000)]
        );
        // One lookup, one static read, two allowances.
        assert_eq!(
            *driver.calls.borrow(),
            ["function", "static", "allow", "allow"]
        );
    }

    #[test]
    fn the_static_part_counts_toward_the_default() {
        // 48,784 dynamic and 512 static bytes pass 48 KB together.
        assert!(needs_shared_opt_in(48_784, 512));
        assert!(!needs_shared_opt_in(48_784, 128));
        assert!(!needs_shared_opt_in(48 * 1024, 0));
        assert!(needs_shared_opt_in(48 * 1024 + 1, 0));
        let (driver, mut cache) = (counting(512), Cache::default());
        let f = resolved(&driver, &mut cache, 1);
        cache.allow_shared(&driver, f, 48_784).unwrap();
        assert_eq!(*driver.allowed.borrow(), [(f as usize, 48_784)]);
    }

    #[test]
    fn a_function_from_elsewhere_asks_the_driver_every_time() {
        let (driver, mut cache) = (counting(0), Cache::default());
        let stranger = 4242usize as sys::CUfunction;
        cache.allow_shared(&driver, stranger, 100_000).unwrap();
        cache.allow_shared(&driver, stranger, 100_000).unwrap();
        assert_eq!(
            *driver.calls.borrow(),
            ["static", "allow", "static", "allow"]
        );
    }

    #[test]
    fn an_unloaded_module_takes_its_functions_and_facts_with_it() {
        let (driver, mut cache) = (counting(0), Cache::default());
        let f = resolved(&driver, &mut cache, 1);
        let g = resolved(&driver, &mut cache, 2);
        cache.allow_shared(&driver, f, 100_000).unwrap();
        cache.allow_shared(&driver, g, 100_000).unwrap();
        cache.forget(module(1));
        // Module 1's function is looked up and its allowance set again
        // (the driver may have given the handle to another kernel);
        // module 2's stays known.
        resolved(&driver, &mut cache, 1);
        resolved(&driver, &mut cache, 2);
        cache.allow_shared(&driver, f, 100_000).unwrap();
        cache.allow_shared(&driver, g, 100_000).unwrap();
        assert_eq!(
            *driver.calls.borrow(),
            [
                "function", "function", "static", "allow", "static", "allow", "function", "static",
                "allow"
            ]
        );
    }

    #[test]
    fn a_failed_lookup_is_not_remembered() {
        let driver = Counting {
            fail_lookup: true,
            ..Counting::default()
        };
        let mut cache = Cache::default();
        let error = cache
            .function(&driver, module(1), A.as_ptr().cast())
            .unwrap_err();
        assert_eq!(error.call, "cuModuleGetFunction");
        assert_eq!(error.status, CUresult::CUDA_ERROR_NOT_FOUND);
        assert!(
            cache
                .function(&driver, module(1), A.as_ptr().cast())
                .is_err()
        );
        assert_eq!(driver.calls.borrow().len(), 2);
    }
}
