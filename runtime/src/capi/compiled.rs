//! The ABI that programs compiled by `symm-compile` call (`symm_rt_*`,
//! emitted by `convert-symm-mem-to-runtime`). Every entry point takes the
//! `symm_runtime*` that the application passed to the compiled function
//! and is one call of a `Session` method (`session::compiled`).
//!
//! A failure here (a size that differs across ranks, a peer that never
//! signals, an exhausted device) goes through `compiled_call`: the rest of
//! the call is skipped, the asynchronous entry point returns -1 (the
//! message waits for `symm_status`), the synchronizing one prints it and
//! exits with status 1. Nothing runs on with a null pointer or bad data.

#![allow(clippy::missing_safety_doc)]

use super::SymmRuntime;
use crate::{
    Error, Result, compiled_call,
    cuda::CUdeviceptr,
    session::{
        Session,
        compiled::{self, size},
    },
};
use std::{
    ffi::c_void,
    panic::{AssertUnwindSafe, catch_unwind},
};

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

/// Runs `body` on the session unless the call has failed already; an
/// error or a panic is recorded as the call's failure (see
/// `compiled_call`), with the GPU context's sticky error when another
/// call's fault explains it.
fn run<T: Inert>(
    what: &str,
    runtime: *mut SymmRuntime,
    body: impl FnOnce(&mut Session) -> Result<T>,
) -> T {
    if compiled_call::has_failed() {
        return T::inert();
    }
    match catch_unwind(AssertUnwindSafe(|| body(session(runtime)?))) {
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

fn session<'a>(runtime: *mut SymmRuntime) -> Result<&'a mut Session> {
    // SAFETY: the compiled function passes the handle its caller gave it.
    unsafe { runtime.as_mut() }.ok_or_else(|| {
        Error::InvalidArgument("the symm_runtime* passed to the compiled function is NULL".into())
    })
}

fn address(pointer: *mut c_void) -> CUdeviceptr {
    pointer as CUdeviceptr
}

fn pointer(address: CUdeviceptr) -> *mut c_void {
    address as *mut c_void
}

/// Starts a call of a compiled function's asynchronous entry point: its
/// work goes on `stream` (NULL: the runtime's; `CU_STREAM_LEGACY` is
/// taken as the legacy default stream, see `Session::graph_begin`), in
/// order, without a synchronize. After a failure that `symm_status` has not reported, the
/// call fails at once and runs nothing.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_enter_async(runtime: *mut SymmRuntime, stream: *mut c_void) {
    compiled_call::begin();
    run("entering a compiled function", runtime, |s| {
        s.enter_async(stream.cast())
    })
}

/// Ends an asynchronous call: 0, or -1 when something in it failed (the
/// message is kept for `symm_status` and is `symm_last_error()` now).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_exit_async(runtime: *mut SymmRuntime) -> i32 {
    // SAFETY: the compiled function passes the handle its caller gave it.
    match Session::exit_async(unsafe { runtime.as_mut() }) {
        None => 0,
        Some(failure) => {
            super::set_last_error(&failure);
            -1
        }
    }
}

/// Ends a call of a synchronizing entry point, after its asynchronous body
/// returned: waits for its work, and exits the process with the message if
/// anything in it failed or a peer never signalled. Under the
/// application's own graph capture (`symm_graph_begin`) nothing ran yet,
/// so it does not wait; `symm_synchronize` after a replay does the check.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_exit(runtime: *mut SymmRuntime) {
    let outcome = catch_unwind(AssertUnwindSafe(|| session(runtime)?.finish_sync()));
    match outcome {
        Ok(Ok(())) => {}
        Ok(Err(error)) => compiled_call::fatal("a compiled function", &error.to_string()),
        Err(_) => compiled_call::fatal(
            "a compiled function",
            "internal error: the symm runtime panicked",
        ),
    }
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
    run("starting a compiled partition's CUDA graph", runtime, |s| {
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
        Ok(i32::from(s.graph_begin(function as u64, key)?))
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
    run("allocating a partition's buffer", runtime, |s| {
        s.graph_buffer(function as u64, index, bytes).map(pointer)
    })
}

/// Ends the body of a compiled function: when it ran under capture, the
/// graph is instantiated, kept for later calls and launched now. It runs
/// even after a failure in the body, to end the capture; that graph is
/// dropped, not kept.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_graph_end(runtime: *mut SymmRuntime, function: *mut c_void) {
    let body_failed = compiled_call::has_failed();
    let what = "capturing a compiled function into a CUDA graph";
    let finish = || session(runtime)?.graph_end(function as u64, body_failed);
    match catch_unwind(AssertUnwindSafe(finish)) {
        Ok(Ok(())) => {}
        Ok(Err(error)) => compiled_call::failed(what, &error.to_string()),
        Err(_) => compiled_call::failed(what, "internal error: the symm runtime panicked"),
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
    run("allocating a symmetric pool", runtime, |s| {
        s.global(id, bytes).map(pointer)
    })
}

/// The descriptor (device memory, `symm_protocol::Descriptor` words) of
/// the pool holding `pointer`: its peer and pad tables, staging layout and
/// call counters, all that a compiled collective's kernel reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_pool_descriptor(
    runtime: *mut SymmRuntime,
    pool_pointer: *mut c_void,
) -> *mut c_void {
    run("finding a collective's pool", runtime, |s| {
        s.pool_descriptor(address(pool_pointer)).map(pointer)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_rank(runtime: *mut SymmRuntime) -> i32 {
    run("reading the rank", runtime, |s| Ok(s.group.rank() as i32))
}

/// Checks that the program was compiled against this runtime's protocol
/// (`symm_protocol::PROTOCOL_FINGERPRINT`): a program and a runtime of two
/// versions of symm fail here rather than read two layouts.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_check_protocol(runtime: *mut SymmRuntime, fingerprint: i64) {
    run("checking the protocol", runtime, |s| {
        s.check_protocol(fingerprint)
    })
}

/// Checks that the program was compiled for this many ranks.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_check_world(runtime: *mut SymmRuntime, world: i64) {
    run("checking the world size", runtime, |s| s.check_world(world))
}

/// Compares the SMs the program's GEMV grids were balanced over with the
/// GPU's, logging a mismatch once.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_check_sms(runtime: *mut SymmRuntime, sms: i64) {
    run("checking the SM count", runtime, |s| s.check_sms(sms))
}

/// Checks a call's token count (the leading size of its dynamic memrefs)
/// against the largest the program was compiled for
/// (`symm_mem.max_tokens`): pools and buffers are sized for that many.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_check_tokens(runtime: *mut SymmRuntime, tokens: i64, max: i64) {
    run("checking the token count", runtime, |s| {
        s.check_tokens(tokens, max)
    })
}

/// Checks that buffer argument `index` starts on an `alignment`-byte
/// boundary.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_check_aligned(
    runtime: *mut SymmRuntime,
    pointer: *mut c_void,
    index: i64,
    alignment: i64,
) {
    run("checking the arguments", runtime, |_| {
        compiled::check_aligned(address(pointer), index, alignment)
    })
}

/// Regular device memory, ordered on the runtime's stream.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_alloc(runtime: *mut SymmRuntime, bytes: i64) -> *mut c_void {
    run("allocating device memory", runtime, |s| {
        s.alloc(bytes).map(pointer)
    })
}

#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_free(runtime: *mut SymmRuntime, memory: *mut c_void) {
    run("freeing device memory", runtime, |s| {
        s.free(address(memory))
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
    run("copying memory", runtime, |s| {
        s.copy(address(dst), address(src), bytes)
    })
}

/// Waits until the call's work so far is done, so that the host may read
/// what a copy into host memory brought (a fallback region between CUDA
/// graph partitions). Under the application's own capture nothing has
/// run, so the host would read stale data: that is an error.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn symm_rt_host_wait(runtime: *mut SymmRuntime) {
    run("waiting for device results the host reads", runtime, |s| {
        s.host_wait()
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
    run("a matmul", runtime, |s| {
        let operands = [address(a), address(b), address(c)];
        s.matmul(operands, [m, n, k], dtype_code, accumulate)
    })
}

/// `c0 (+)= a @ b0` and `c1 (+)= a @ b1`, shapes and codes as
/// `symm_rt_matmul`'s: two matmuls sharing their left operand (a gate and
/// an up projection), one batched GEMM where the addresses allow it.
/// `layout` (`enum symm_matmul_layout`) says how `a` and the weights are
/// stored: `SYMM_TRANSPOSED_B` for weights of n x k (nn.Linear's).
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
    layout: i32,
) {
    run("a matmul pair", runtime, |s| {
        let pairs = [[address(b0), address(c0)], [address(b1), address(c1)]];
        s.matmul_pair(
            address(a),
            pairs,
            [m, n, k],
            [dtype_code, accumulate, layout],
        )
    })
}

/// `c_i (+)= a_i @ b_i` for `i < batch` (linalg.batch_matmul, a split-K
/// GEMM's slices): row-major matrices, a_i m x k, b_i k x n, c_i m x n,
/// each with its row stride and batch stride in elements; the inputs of
/// dtype code `in_code`, the output of `out_code` (the same, or f32);
/// `layout` (`enum symm_matmul_layout`) says whether a_i is stored as its
/// transpose (k x m) and whether b_i is (n x k).
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
    layout: i32,
) {
    run("a batched matmul", runtime, |s| {
        let operands = [
            (address(a), lda, stride_a),
            (address(b), ldb, stride_b),
            (address(c), ldc, stride_c),
        ];
        s.batch_matmul(
            operands,
            batch,
            [m, n, k],
            [in_code, out_code],
            [accumulate, layout],
        )
    })
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
    run("all_gather_matmul", runtime, |s| {
        s.all_gather_matmul([address(a), address(b), address(c)], [m, k, n], dtype_code)
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
    after: i64,
) -> i64 {
    run("choosing a matmul's kernel", runtime, |s| {
        s.kernel_rounds(site, rows, max_rows, after)
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
    run("choosing a matmul's kernel", runtime, |s| {
        s.kernel_variant(site, rows, round, max_rows).map(i32::from)
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
    run("timing a matmul's kernel", runtime, |s| {
        s.kernel_variant_end(site, rows, round)
    })
}

/// The device address of a TMA descriptor of a bf16 matrix, 0 where there
/// is none (`symm_mem.tensor_map`).
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn symm_rt_tensor_map(
    runtime: *mut SymmRuntime,
    matrix: *mut c_void,
    rows: i64,
    columns: i64,
    row_stride: i64,
    box_rows: i64,
    box_columns: i64,
) -> i64 {
    run("describing a matrix for the TMA", runtime, |s| {
        let size = |v: i64| u64::try_from(v).unwrap_or(0);
        let key = crate::tensor_maps::TensorMapKey {
            address: address(matrix),
            rows: size(rows),
            columns: size(columns),
            row_stride: size(row_stride),
            box_rows: size(box_rows),
            box_columns: size(box_columns),
        };
        s.tensor_map(key).map(|address| address as i64)
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
    signature!(A, B, C, D, E, F, G);
    signature!(A, B, C, D, E, F, G, H);
    signature!(A, B, C, D, E, F, G, H, I);
    signature!(A, B, C, D, E, F, G, H, I, J, K);
    signature!(A, B, C, D, E, F, G, H, I, J, K, L);
    signature!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q);
    signature!(A, B, C, D, E, F, G, H, I, J, K, L, M, N, O, P, Q, S);

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
                "symm_rt_check_protocol",
                of(symm_rt_check_protocol as unsafe extern "C" fn(_, _)),
            ),
            (
                "symm_rt_check_world",
                of(symm_rt_check_world as unsafe extern "C" fn(_, _)),
            ),
            (
                "symm_rt_check_sms",
                of(symm_rt_check_sms as unsafe extern "C" fn(_, _)),
            ),
            (
                "symm_rt_check_tokens",
                of(symm_rt_check_tokens as unsafe extern "C" fn(_, _, _)),
            ),
            (
                "symm_rt_check_aligned",
                of(symm_rt_check_aligned as unsafe extern "C" fn(_, _, _, _)),
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
                    as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _, _)),
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
                of(symm_rt_matmul_pair as unsafe extern "C" fn(_, _, _, _, _, _, _, _, _, _, _, _)),
            ),
            (
                "symm_rt_all_gather_matmul",
                of(symm_rt_all_gather_matmul as unsafe extern "C" fn(_, _, _, _, _, _, _, _)),
            ),
            (
                "symm_rt_kernel_rounds",
                of(symm_rt_kernel_rounds as unsafe extern "C" fn(_, _, _, _, _) -> _),
            ),
            (
                "symm_rt_kernel_variant",
                of(symm_rt_kernel_variant as unsafe extern "C" fn(_, _, _, _, _) -> _),
            ),
            (
                "symm_rt_kernel_variant_end",
                of(symm_rt_kernel_variant_end as unsafe extern "C" fn(_, _, _, _)),
            ),
            (
                "symm_rt_tensor_map",
                of(symm_rt_tensor_map as unsafe extern "C" fn(_, _, _, _, _, _, _) -> _),
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
