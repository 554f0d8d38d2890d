//! Which of cuBLAS's kernels runs a GEMM that the runtime hands to the
//! library (a pair's batched gate and up, the split-K slices of a down
//! projection, o_proj and the like at 17 rows and up, prefill).
//!
//! `cublasGemmStridedBatchedEx` with `CUBLAS_GEMM_DEFAULT` runs the first
//! kernel of cuBLAS's heuristic. cuBLASLt returns the heuristic's list
//! (eight kernels on an H200), and the first is not always the fastest:
//! for Llama-3-8B's batched gate and up at TP 2 on one H200 (K = 4096, two
//! weights of 7168 columns, in CUDA graphs, weights rotated past L2) the
//! fourth kernel of the list took 28.8 µs at 16 rows and the third 31.4-31.6
//! at 128, against 30.1-30.2 and 32.7-32.8 for the default, 1.04-1.05x; the
//! split-K slices and o_proj gained at most 2%
//! (bench/results/2026-11-29-gemm-algos-h200.md, `lt_algos.cu`). No rule on
//! the shape says which kernel wins, so each GEMM is measured once, on its
//! first call outside a CUDA graph capture (the compiled entry points run
//! a token count's first call eagerly): the default call and each kernel
//! of the list, taking turns, into scratch outputs (the caller's stay as
//! they are), each timed behind a stream gate (`stream_gate`). A kernel of
//! the list replaces the default only when faster by more than `MARGIN`,
//! so that shapes where they tie keep today's call from run to run.
//!
//! Only kernels that need no workspace are listed: one handle serves every
//! stream of a session (the all-gather matmul's two among them), and a
//! shared workspace would be written by two GEMMs at once. A call during a
//! capture before its shape was measured runs the default, as does a
//! kernel that refuses a call's pointers or strides (a GEMM is keyed by
//! its sizes, leading dimensions and alignment, not by where its matrices
//! lie).
//!
//! Calls of more than `MEASURED_MAX_ROWS` rows (prefill) run the default:
//! there the list gained at most 1%, and each row count would be measured.
//!
//! `SYMM_GEMM_ALGO=default` keeps cuBLAS's default call everywhere (no
//! measurement, today's kernels); `=measured` is the default. Each rank
//! measures its own GEMMs: the choice changes no kernel another rank waits
//! for, only how this rank's library call runs.

use crate::cuda::{CUdeviceptr, CUstream, DeviceBuffer, Stream};
use crate::error::{Error, Result};
use crate::library::Dtype;
use crate::stream_gate::GatedTimer;
use cudarc::cublaslt::sys as lt;
use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

/// Name of the environment variable that sets the policy.
pub const POLICY_ENV: &str = "SYMM_GEMM_ALGO";

/// A kernel of the list replaces the default call only when faster by more
/// than this fraction of the default's time. Two calls of one kernel timed
/// within 0.5% of each other in the probe; the gains it found were 4-5%.
pub const MARGIN: f64 = 0.02;

/// Calls of more rows run the default without measuring. At 2048 rows the
/// list's best was within 1% of the default for every GEMM of the probe,
/// while a measurement costs about 80 calls of the GEMM, and a server sees
/// many distinct row counts: each is a shape of its own.
pub const MEASURED_MAX_ROWS: usize = 512;

/// The most kernels of the heuristic's list that are measured.
const LISTED: usize = 8;
/// Rounds of each way: the first `WARM_UP` only warm up.
const WARM_UP: usize = 2;
const ROUNDS: usize = 7;
/// Back-to-back calls per timed block.
const REPEATS: usize = 3;

/// How a GEMM's kernel is picked (`SYMM_GEMM_ALGO`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AlgoPolicy {
    /// cuBLAS's default call, never measured.
    Default,
    /// The faster of the default and the heuristic's list, measured once.
    Measured,
}

impl AlgoPolicy {
    /// The policy a value of `SYMM_GEMM_ALGO` names (unset: measured).
    pub fn parse(value: Option<&str>) -> Result<Self> {
        match value.map(str::trim) {
            None | Some("") | Some("measured") => Ok(Self::Measured),
            Some("default") => Ok(Self::Default),
            Some(other) => Err(Error::InvalidArgument(format!(
                "{POLICY_ENV}={other:?}: expected default or measured"
            ))),
        }
    }

    pub fn from_env() -> Result<Self> {
        Self::parse(std::env::var(POLICY_ENV).ok().as_deref())
    }
}

/// One operand of a strided batched GEMM: its address, element type, row
/// stride (the leading dimension of a row-major matrix), the distance
/// from one matrix of the batch to the next, in elements, and whether it
/// is stored as its transpose (an input only: b as n x k, a as k x m).
#[derive(Clone, Copy, Debug)]
pub struct Strided {
    pub ptr: CUdeviceptr,
    pub dtype: Dtype,
    pub ld: usize,
    pub batch_stride: i64,
    pub transposed: bool,
}

/// One GEMM as `agmm::Matmul::gemm_strided` takes it: `batch` products
/// `c_i = a_i @ b_i + beta * c_i` of row-major strided matrices, sizes
/// `(m, k, n)`.
#[derive(Clone, Copy, Debug)]
pub struct Gemm {
    pub a: Strided,
    pub b: Strided,
    pub c: Strided,
    pub batch: i32,
    pub shape: (usize, usize, usize),
    pub beta: f32,
}

/// What a kernel's choice depends on: everything of a GEMM but where its
/// matrices lie, of which only the alignment counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    dtypes: (Dtype, Dtype),
    transposed: (bool, bool),
    shape: (usize, usize, usize),
    batch: i32,
    lds: [usize; 3],
    batched: [bool; 3],
    align: u64,
}

impl Key {
    fn of(gemm: &Gemm) -> Self {
        let operands = [gemm.a, gemm.b, gemm.c];
        Self {
            dtypes: (gemm.a.dtype, gemm.c.dtype),
            transposed: (gemm.a.transposed, gemm.b.transposed),
            shape: gemm.shape,
            batch: gemm.batch,
            lds: operands.map(|o| o.ld),
            batched: operands.map(|o| o.batch_stride != 0),
            align: alignment(&operands),
        }
    }
}

/// What a GEMM's cuBLASLt description (`Described`) depends on: its key,
/// and what the key leaves out that the layouts hold (the batch strides,
/// which differ between layers of one shape, and b's element type). Each
/// is described once and kept, not on every call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct DescribedKey {
    key: Key,
    batch_strides: [i64; 3],
    b_dtype: Dtype,
}

impl DescribedKey {
    fn of(gemm: &Gemm) -> Self {
        Self {
            key: Key::of(gemm),
            batch_strides: [gemm.a, gemm.b, gemm.c].map(|o| o.batch_stride),
            b_dtype: gemm.b.dtype,
        }
    }
}

/// The largest power of two up to 16 that divides every operand's address,
/// row stride and batch stride in bytes.
fn alignment(operands: &[Strided]) -> u64 {
    operands
        .iter()
        .flat_map(|o| {
            let bytes = o.dtype.bytes() as u64;
            [
                o.ptr,
                o.ld as u64 * bytes,
                o.batch_stride.unsigned_abs() * bytes,
            ]
        })
        .fold(16, |align, x| align.min(1 << x.trailing_zeros().min(4)))
}

/// The way a GEMM runs.
#[derive(Clone, Copy, Debug)]
enum Chosen {
    /// cuBLAS's default call.
    Default,
    /// This cuBLASLt kernel.
    Listed(lt::cublasLtMatmulAlgo_t),
}

/// The default's index among the ways measured; the list's kernels follow.
const DEFAULT_WAY: usize = 0;

/// The way to keep from each way's best time (µs): the fastest kernel of
/// the list if it beats the default (`times[DEFAULT_WAY]`) by more than
/// `MARGIN`, else the default. Its index in `times`.
pub fn fastest(times: &[f64]) -> usize {
    let default = times[DEFAULT_WAY];
    let (best, best_us) = times.iter().copied().enumerate().skip(1).fold(
        (DEFAULT_WAY, f64::INFINITY),
        |(bi, bt), (i, t)| {
            if t < bt { (i, t) } else { (bi, bt) }
        },
    );
    if best_us < default * (1.0 - MARGIN) {
        best
    } else {
        DEFAULT_WAY
    }
}

fn check_lt(status: lt::cublasStatus_t, what: &str) -> Result<()> {
    if status == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::CublasLt {
            what: what.to_owned(),
            status,
        })
    }
}

fn data_type(dtype: Dtype) -> lt::cudaDataType {
    match dtype {
        Dtype::F32 => lt::cudaDataType::CUDA_R_32F,
        Dtype::F16 => lt::cudaDataType::CUDA_R_16F,
        Dtype::Bf16 => lt::cudaDataType::CUDA_R_16BF,
    }
}

/// A GEMM described to cuBLASLt: the operation and its three layouts, in
/// the library's column-major terms (row-major `c = a @ b` is column-major
/// `c^T = b^T a^T`, so `b` is its first operand), destroyed on drop.
struct Described {
    desc: lt::cublasLtMatmulDesc_t,
    layouts: [lt::cublasLtMatrixLayout_t; 3],
}

impl Described {
    fn new(gemm: &Gemm) -> Result<Self> {
        let mut described = Self {
            desc: std::ptr::null_mut(),
            layouts: [std::ptr::null_mut(); 3],
        };
        let (m, k, n) = gemm.shape;
        // SAFETY: out-pointers to fields; the attributes' buffers are locals
        // of the attribute's type and size.
        unsafe {
            check_lt(
                lt::cublasLtMatmulDescCreate(
                    &mut described.desc,
                    lt::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                    lt::cudaDataType::CUDA_R_32F,
                ),
                "cublasLtMatmulDescCreate",
            )?;
            for (attribute, transposed) in [
                (
                    lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSA,
                    gemm.b.transposed,
                ),
                (
                    lt::cublasLtMatmulDescAttributes_t::CUBLASLT_MATMUL_DESC_TRANSB,
                    gemm.a.transposed,
                ),
            ] {
                let op = if transposed {
                    cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_T
                } else {
                    cudarc::cublas::sys::cublasOperation_t::CUBLAS_OP_N
                };
                check_lt(
                    lt::cublasLtMatmulDescSetAttribute(
                        described.desc,
                        attribute,
                        (&op as *const cudarc::cublas::sys::cublasOperation_t).cast(),
                        std::mem::size_of_val(&op),
                    ),
                    "cublasLtMatmulDescSetAttribute",
                )?;
            }
            // Stored (rows, columns) of each operand, column-major: b is
            // n x k (k x n transposed), a is k x m (m x k transposed), c
            // is n x m.
            let stored = |transposed: bool, rows: usize, columns: usize| {
                if transposed {
                    (columns, rows)
                } else {
                    (rows, columns)
                }
            };
            let shapes = [
                (gemm.b, stored(gemm.b.transposed, n, k)),
                (gemm.a, stored(gemm.a.transposed, k, m)),
                (gemm.c, (n, m)),
            ];
            for (slot, (operand, (rows, columns))) in described.layouts.iter_mut().zip(shapes) {
                check_lt(
                    lt::cublasLtMatrixLayoutCreate(
                        slot,
                        data_type(operand.dtype),
                        rows as u64,
                        columns as u64,
                        operand.ld as i64,
                    ),
                    "cublasLtMatrixLayoutCreate",
                )?;
                if gemm.batch > 1 {
                    layout_attribute(
                        *slot,
                        lt::cublasLtMatrixLayoutAttribute_t::CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                        gemm.batch,
                    )?;
                    layout_attribute(
                        *slot,
                        lt::cublasLtMatrixLayoutAttribute_t::CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                        operand.batch_stride,
                    )?;
                }
            }
        }
        Ok(described)
    }
}

/// Sets a layout's `attribute` to `value` (of the attribute's C type: i32
/// for the batch count, i64 for the batch stride).
fn layout_attribute<T: Copy>(
    layout: lt::cublasLtMatrixLayout_t,
    attribute: lt::cublasLtMatrixLayoutAttribute_t,
    value: T,
) -> Result<()> {
    // SAFETY: a live layout; the buffer is a local of the attribute's size.
    check_lt(
        unsafe {
            lt::cublasLtMatrixLayoutSetAttribute(
                layout,
                attribute,
                (&value as *const T).cast(),
                std::mem::size_of::<T>(),
            )
        },
        "cublasLtMatrixLayoutSetAttribute",
    )
}

// SAFETY: host objects that cuBLASLt only reads once made (its
// documentation: a matmul descriptor and layouts may serve concurrent
// calls); destroyed once, on drop.
unsafe impl Send for Described {}
unsafe impl Sync for Described {}

impl Drop for Described {
    fn drop(&mut self) {
        // SAFETY: created in `new` (null where creation failed first).
        unsafe {
            for layout in self.layouts {
                if !layout.is_null() {
                    lt::cublasLtMatrixLayoutDestroy(layout);
                }
            }
            if !self.desc.is_null() {
                lt::cublasLtMatmulDescDestroy(self.desc);
            }
        }
    }
}

/// The cuBLASLt handle and the way found for each GEMM.
pub struct GemmAlgos {
    handle: lt::cublasLtHandle_t,
    found: Mutex<HashMap<Key, Chosen>>,
    /// The GEMMs described so far, for the calls that run a kernel of the
    /// list.
    described: Mutex<HashMap<DescribedKey, Arc<Described>>>,
}

// SAFETY: cuBLASLt handles are thread-safe (the library's documentation);
// the table is behind a mutex.
unsafe impl Send for GemmAlgos {}
unsafe impl Sync for GemmAlgos {}

impl GemmAlgos {
    /// The measured choice, or `None` for the default call everywhere: the
    /// policy says so, or libcublasLt.so is not found (said in the log).
    pub fn new(policy: AlgoPolicy) -> Result<Option<Self>> {
        if policy == AlgoPolicy::Default {
            return Ok(None);
        }
        // SAFETY: probing the library; nothing is called if it is absent.
        if !unsafe { lt::is_culib_present() } {
            tracing::warn!(
                "libcublasLt.so not found: cuBLAS's default kernels for every GEMM (put its \
                 folder on LD_LIBRARY_PATH to measure the others)"
            );
            return Ok(None);
        }
        let mut handle = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check_lt(unsafe { lt::cublasLtCreate(&mut handle) }, "cublasLtCreate")?;
        Ok(Some(Self {
            handle,
            found: Mutex::new(HashMap::new()),
            described: Mutex::new(HashMap::new()),
        }))
    }

    /// Runs `gemm` on `stream` the way found for its key (measured now if
    /// not yet and the stream is not capturing). `default` runs cuBLAS's
    /// default call with the output at the given address.
    pub fn run(
        &self,
        gemm: &Gemm,
        stream: CUstream,
        default: &dyn Fn(CUdeviceptr) -> Result<()>,
    ) -> Result<()> {
        if gemm.shape.0 > MEASURED_MAX_ROWS {
            return default(gemm.c.ptr);
        }
        let key = Key::of(gemm);
        let known = self.table()?.get(&key).copied();
        let chosen = match known {
            Some(chosen) => chosen,
            None => match self.measure(gemm, stream, default)? {
                Some(chosen) => {
                    self.table()?.insert(key, chosen);
                    chosen
                }
                None => Chosen::Default,
            },
        };
        match chosen {
            Chosen::Default => default(gemm.c.ptr),
            Chosen::Listed(algo) => {
                let described = self.described(gemm)?;
                match self.matmul(gemm, &described, &algo, gemm.c.ptr, stream) {
                    Err(Error::CublasLt { status, .. })
                        if matches!(
                            status,
                            lt::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED
                                | lt::cublasStatus_t::CUBLAS_STATUS_INVALID_VALUE
                        ) =>
                    {
                        tracing::debug!(
                            "gemm {:?}: the kernel measured for its shape refuses these \
                             operands ({status:?}); cuBLAS's default",
                            gemm.shape
                        );
                        default(gemm.c.ptr)
                    }
                    other => other,
                }
            }
        }
    }

    /// How many GEMMs (by key) were measured, and how many of them took a
    /// kernel of the list.
    pub fn counts(&self) -> Result<(usize, usize)> {
        let table = self.table()?;
        let listed = table
            .values()
            .filter(|chosen| matches!(chosen, Chosen::Listed(_)))
            .count();
        Ok((table.len(), listed))
    }

    /// `gemm` described to cuBLASLt: once per `DescribedKey`, then kept.
    fn described(&self, gemm: &Gemm) -> Result<Arc<Described>> {
        let mut described = self
            .described
            .lock()
            .map_err(|_| Error::InvalidArgument("the GEMM descriptions were poisoned".into()))?;
        match described.entry(DescribedKey::of(gemm)) {
            std::collections::hash_map::Entry::Occupied(kept) => Ok(kept.get().clone()),
            std::collections::hash_map::Entry::Vacant(slot) => {
                Ok(slot.insert(Arc::new(Described::new(gemm)?)).clone())
            }
        }
    }

    fn table(&self) -> Result<std::sync::MutexGuard<'_, HashMap<Key, Chosen>>> {
        self.found
            .lock()
            .map_err(|_| Error::InvalidArgument("the GEMM kernel table was poisoned".into()))
    }

    /// `gemm` with cuBLASLt's kernel `algo`, its output at `c`.
    fn matmul(
        &self,
        gemm: &Gemm,
        described: &Described,
        algo: &lt::cublasLtMatmulAlgo_t,
        c: CUdeviceptr,
        stream: CUstream,
    ) -> Result<()> {
        let alpha = 1f32;
        let [lb, la, lc] = described.layouts;
        crate::programmatic_launch::after_library_kernel();
        // SAFETY: device matrices of the described shapes and strides; a
        // live handle and stream; no workspace (the kernels listed need
        // none).
        check_lt(
            unsafe {
                lt::cublasLtMatmul(
                    self.handle,
                    described.desc,
                    (&alpha as *const f32).cast(),
                    gemm.b.ptr as *const c_void,
                    lb,
                    gemm.a.ptr as *const c_void,
                    la,
                    (&gemm.beta as *const f32).cast(),
                    c as *const c_void,
                    lc,
                    c as *mut c_void,
                    lc,
                    algo,
                    std::ptr::null_mut(),
                    0,
                    stream.cast(),
                )
            },
            "cublasLtMatmul",
        )
    }

    /// The heuristic's kernels for `described` that need no workspace.
    fn listed(&self, described: &Described) -> Result<Vec<lt::cublasLtMatmulAlgo_t>> {
        let mut preference = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check_lt(
            unsafe { lt::cublasLtMatmulPreferenceCreate(&mut preference) },
            "cublasLtMatmulPreferenceCreate",
        )?;
        let workspace = 0usize;
        let mut results: Vec<lt::cublasLtMatmulHeuristicResult_t> =
            // SAFETY: a plain C struct, all-zero is a valid value.
            vec![unsafe { std::mem::zeroed() }; LISTED];
        let mut count = 0;
        let [lb, la, lc] = described.layouts;
        // SAFETY: live descriptors; `results` holds `LISTED` entries.
        let status = unsafe {
            let set = lt::cublasLtMatmulPreferenceSetAttribute(
                preference,
                lt::cublasLtMatmulPreferenceAttributes_t::CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                (&workspace as *const usize).cast(),
                std::mem::size_of_val(&workspace),
            );
            let listed = lt::cublasLtMatmulAlgoGetHeuristic(
                self.handle,
                described.desc,
                lb,
                la,
                lc,
                lc,
                preference,
                LISTED as i32,
                results.as_mut_ptr(),
                &mut count,
            );
            lt::cublasLtMatmulPreferenceDestroy(preference);
            check_lt(set, "cublasLtMatmulPreferenceSetAttribute").map(|()| listed)
        }?;
        // No kernel for the problem is an answer (the default runs), not an
        // error.
        if status == lt::cublasStatus_t::CUBLAS_STATUS_NOT_SUPPORTED {
            return Ok(Vec::new());
        }
        check_lt(status, "cublasLtMatmulAlgoGetHeuristic")?;
        Ok(results
            .iter()
            .take(count.max(0) as usize)
            .filter(|r| r.state == lt::cublasStatus_t::CUBLAS_STATUS_SUCCESS)
            .map(|r| r.algo)
            .collect())
    }

    /// Times the default call and the listed kernels on `stream` into a
    /// scratch output, and returns the way to keep; `None` while `stream`
    /// captures a graph (no timing there) or without the memory for the
    /// scratch (the default runs, and a later call measures).
    fn measure(
        &self,
        gemm: &Gemm,
        stream: CUstream,
        default: &dyn Fn(CUdeviceptr) -> Result<()>,
    ) -> Result<Option<Chosen>> {
        let on = Stream::borrowed(stream);
        if on.is_capturing()? {
            return Ok(None);
        }
        let described = self.described(gemm)?;
        let listed = self.listed(&described)?;
        if listed.is_empty() {
            return Ok(Some(Chosen::Default));
        }
        let (m, k, n) = gemm.shape;
        let c = gemm.c;
        let extent = (gemm.batch.max(1) as usize - 1) * c.batch_stride.unsigned_abs() as usize
            + (m - 1) * c.ld
            + n;
        let scratch = match DeviceBuffer::new(extent * c.dtype.bytes()) {
            Ok(scratch) => scratch,
            Err(error) => {
                tracing::warn!(
                    "gemm {m}x{k}x{n}: no scratch to measure cuBLAS's kernels ({error}); its \
                     default"
                );
                return Ok(None);
            }
        };
        // The output is read when beta is not zero: zeros, not garbage.
        scratch.zero()?;
        let out = scratch.ptr;
        // Each way's first call runs untimed; a kernel that refuses the
        // call drops out.
        let mut ways: Vec<Option<lt::cublasLtMatmulAlgo_t>> = vec![None];
        default(out)?;
        for algo in listed {
            if self.matmul(gemm, &described, &algo, out, stream).is_ok() {
                ways.push(Some(algo));
            }
        }
        let run = |way: &Option<lt::cublasLtMatmulAlgo_t>| match way {
            None => default(out),
            Some(algo) => self.matmul(gemm, &described, algo, out, stream),
        };
        let timer = GatedTimer::new()?;
        let mut best = vec![f64::INFINITY; ways.len()];
        for round in 0..WARM_UP + ROUNDS {
            let counted = round >= WARM_UP;
            // The ways take turns, starting one later each round.
            for turn in 0..ways.len() {
                let index = (turn + round) % ways.len();
                let us = timer.time(&on, counted, || {
                    (0..REPEATS).try_for_each(|_| run(&ways[index]))
                })?;
                if counted && us < f64::MAX {
                    best[index] = best[index].min(us / REPEATS as f64);
                }
            }
        }
        let kept = fastest(&best);
        let dtype = gemm.a.dtype.text();
        let batch = gemm.batch;
        if kept == DEFAULT_WAY {
            tracing::info!(
                "gemm {m}x{k} @ {batch} x {k}x{n} {dtype}: cuBLAS's default ({:.1} us; the \
                 best of {} listed kernels {:.1} us)",
                best[DEFAULT_WAY],
                ways.len() - 1,
                best[1..].iter().copied().fold(f64::INFINITY, f64::min)
            );
            return Ok(Some(Chosen::Default));
        }
        tracing::info!(
            "gemm {m}x{k} @ {batch} x {k}x{n} {dtype}: cuBLASLt's kernel {kept} of {} listed \
             ({:.1} us against the default's {:.1} us)",
            ways.len() - 1,
            best[kept],
            best[DEFAULT_WAY]
        );
        Ok(ways[kept].map(Chosen::Listed))
    }
}

impl Drop for GemmAlgos {
    fn drop(&mut self) {
        // SAFETY: created in `new`.
        unsafe {
            lt::cublasLtDestroy(self.handle);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_comes_from_the_environment_value() {
        assert_eq!(AlgoPolicy::parse(None).unwrap(), AlgoPolicy::Measured);
        assert_eq!(
            AlgoPolicy::parse(Some(" measured ")).unwrap(),
            AlgoPolicy::Measured
        );
        assert_eq!(
            AlgoPolicy::parse(Some("default")).unwrap(),
            AlgoPolicy::Default
        );
        assert_eq!(
            AlgoPolicy::parse(Some("fast")).unwrap_err().to_string(),
            "invalid argument: SYMM_GEMM_ALGO=\"fast\": expected default or measured"
        );
    }

    #[test]
    fn a_listed_kernel_must_win_by_the_margin() {
        // The probe's batched gate+up at 16 and 128 rows.
        assert_eq!(fastest(&[30.1, 30.2, 29.8, 31.7, 28.8]), 4);
        assert_eq!(fastest(&[32.8, 32.7, 32.1, 31.6, 33.0]), 3);
        // Within the margin: the default stays.
        assert_eq!(fastest(&[16.9, 16.9, 16.8]), DEFAULT_WAY);
        assert_eq!(fastest(&[7.0, 7.0, 9.9]), DEFAULT_WAY);
        // Unmeasured kernels (a gate that gave up) never win.
        assert_eq!(fastest(&[10.0, f64::INFINITY]), DEFAULT_WAY);
        assert_eq!(fastest(&[f64::INFINITY, 10.0]), 1);
    }

    fn operand(ptr: u64, ld: usize, batch_stride: i64) -> Strided {
        Strided {
            ptr,
            dtype: Dtype::Bf16,
            ld,
            batch_stride,
            transposed: false,
        }
    }

    #[test]
    fn the_key_keeps_alignment_and_drops_addresses() {
        let gemm = |a: u64, stride: i64| Gemm {
            a: operand(a, 4096, 0),
            b: operand(0x7000_0000, 7168, stride),
            c: operand(0x9000_0000, 7168, 16 * 7168),
            batch: 2,
            shape: (16, 4096, 7168),
            beta: 0.0,
        };
        // Two layers' pairs: other addresses, other distances between gate
        // and up, one key.
        assert_eq!(
            Key::of(&gemm(0x1000_0000, 4096 * 7168 + 64)),
            Key::of(&gemm(0x2000_0000, 4096 * 7168 + 1024))
        );
        assert_eq!(Key::of(&gemm(0x1000_0000, 64)).align, 16);
        // A weight 2 bytes off 16 is another key.
        assert_eq!(Key::of(&gemm(0x1000_0000, 4096 * 7168 + 1)).align, 2);
        assert_eq!(Key::of(&gemm(0x1000_0004, 64)).align, 4);
        // Their descriptions differ by the distance (the layouts hold it),
        // and not by the addresses.
        let (first, second) = (gemm(0x1000_0000, 64), gemm(0x2000_0000, 1024));
        assert_ne!(DescribedKey::of(&first), DescribedKey::of(&second));
        assert_eq!(
            DescribedKey::of(&first),
            DescribedKey::of(&gemm(0x3000_0000, 64))
        );
    }
}
