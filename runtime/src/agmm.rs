//! All-gather + matmul (seed 003): `out = all_gather(a) @ b` for row shards
//! `a` (m x k per rank, a symmetric buffer) and a full `b` (k x n), bf16,
//! row-major. A P2P ring: step s copies the shard of rank (rank+s) % W
//! from its mapping with the copy engine, on two alternating streams, and
//! runs that shard's matmul (cuBLAS, loaded at run time) as soon as its
//! copy lands; step 0 multiplies the local shard with no copy. Barriers
//! before (shards ready) and after (peers done reading) keep it safe to
//! call repeatedly and inside a CUDA graph.

use crate::{
    collectives::Collectives,
    cuda::{CUdeviceptr, CUstream, DeviceBuffer, Event, Stream, check},
    error::{Error, Result},
    gemm_algos::{AlgoPolicy, Gemm, GemmAlgos, Strided},
    library::{Dtype, GemmInputs},
    pair_choice::{PairChoices, PairPolicy, PairWay, faster},
    stream_gate::GatedTimer,
    symmetric::SymmetricBuffer,
};
use cudarc::{cublas::sys as cublas, driver::sys};

fn check_blas(status: cublas::cublasStatus_t, what: &str) -> Result<()> {
    if status == cublas::cublasStatus_t::CUBLAS_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::Cublas {
            what: what.to_owned(),
            status,
        })
    }
}

/// A cuBLAS handle for row-major matmuls, how it runs matmul pairs, and
/// which of cuBLAS's kernels runs each GEMM (`gemm_algos`).
pub struct Matmul {
    handle: cublas::cublasHandle_t,
    pairs: PairChoices,
    algos: Option<GemmAlgos>,
}

// SAFETY: the handle is used by its owner only.
unsafe impl Send for Matmul {}

impl Matmul {
    /// The policies of `SYMM_GEMM_PAIR` and `SYMM_GEMM_ALGO`.
    pub fn new() -> Result<Self> {
        Self::with_algos(AlgoPolicy::from_env()?)
    }

    /// `SYMM_GEMM_PAIR`'s policy, and `algos` for the GEMMs' kernels.
    pub fn with_algos(algos: AlgoPolicy) -> Result<Self> {
        let policy = PairPolicy::pair_from_env()?;
        // SAFETY: probing the library; nothing is called if it is absent.
        if !unsafe { cublas::is_culib_present() } {
            return Err(Error::Cuda(
                "all_gather_matmul needs libcublas.so (put its folder on LD_LIBRARY_PATH)".into(),
            ));
        }
        let mut handle = std::ptr::null_mut();
        // SAFETY: out-pointer to a local.
        check_blas(
            unsafe { cublas::cublasCreate_v2(&mut handle) },
            "cublasCreate",
        )?;
        Ok(Self {
            handle,
            pairs: PairChoices::new(policy),
            algos: GemmAlgos::new(algos)?,
        })
    }

    /// How many GEMMs (by shape) had their kernel measured, and how many of
    /// them took one of cuBLASLt's list over cuBLAS's default; `None` under
    /// `SYMM_GEMM_ALGO=default` or without libcublasLt.
    pub fn algo_counts(&self) -> Result<Option<(usize, usize)>> {
        self.algos.as_ref().map(GemmAlgos::counts).transpose()
    }

    /// `c (m x n) = a (m x k) @ b (k x n)`, bf16 in and out, f32 accumulate,
    /// row-major, on `stream`.
    #[allow(clippy::too_many_arguments)]
    pub fn bf16(
        &self,
        a: CUdeviceptr,
        b: CUdeviceptr,
        c: CUdeviceptr,
        m: usize,
        k: usize,
        n: usize,
        stream: CUstream,
    ) -> Result<()> {
        self.gemm(Dtype::Bf16, [a, b, c], (m, k, n), 0.0, stream)
    }

    /// `c = a @ b + beta * c` for row-major `a` (m x k), `b` (k x n) and
    /// `c` (m x n) of `dtype`, accumulating in f32 (true f32 for f32: no
    /// TF32), on `stream`.
    pub fn gemm(
        &self,
        dtype: Dtype,
        [a, b, c]: [CUdeviceptr; 3],
        shape: (usize, usize, usize),
        beta: f32,
        stream: CUstream,
    ) -> Result<()> {
        let inputs = GemmInputs::row_major(dtype);
        self.gemm_batched(inputs, [a, b, c], [0, 0], 1, shape, beta, stream)
    }

    /// Two matmuls that share `a`: `c0 = a @ b0` and `c1 = a @ b1` (plus
    /// `beta` times their outputs), as one batched GEMM when the distance
    /// from `b0` to `b1` and from `c0` to `c1` are whole elements of the
    /// same sign (a batch stride, in either order), which is one launch
    /// over both weights (a gate and up projection as one wide GEMM), and
    /// the shape's way (`pair_choice`) is the batched one; otherwise as two
    /// GEMMs. `inputs.layout` says how `a` and the weights are stored.
    #[allow(clippy::too_many_arguments)]
    pub fn gemm_pair(
        &self,
        inputs: GemmInputs,
        a: CUdeviceptr,
        [b0, c0]: [CUdeviceptr; 2],
        [b1, c1]: [CUdeviceptr; 2],
        shape: (usize, usize, usize),
        beta: f32,
        stream: CUstream,
    ) -> Result<()> {
        match pair_strides(inputs.dtype.bytes() as u64, [b0, c0], [b1, c1]) {
            Some((first, strides)) => {
                let [b, c] = if first == 0 { [b0, c0] } else { [b1, c1] };
                let way = self.pairs.way((inputs, shape), || {
                    self.measure_pair(inputs, a, b, strides[0], shape, stream)
                })?;
                if way == PairWay::Batched {
                    return self.gemm_batched(inputs, [a, b, c], strides, 2, shape, beta, stream);
                }
            }
            None => {
                tracing::debug!("matmul pair: weights and outputs not at one stride; two GEMMs");
            }
        }
        self.two_gemms(inputs, a, [[b0, c0], [b1, c1]], shape, beta, stream)
    }

    /// The pair as two GEMMs, `c_i = a @ b_i + beta * c_i`.
    fn two_gemms(
        &self,
        inputs: GemmInputs,
        a: CUdeviceptr,
        pair: [[CUdeviceptr; 2]; 2],
        shape: (usize, usize, usize),
        beta: f32,
        stream: CUstream,
    ) -> Result<()> {
        for [b, c] in pair {
            self.gemm_batched(inputs, [a, b, c], [0, 0], 1, shape, beta, stream)?;
        }
        Ok(())
    }

    /// Times a pair (weights at `b` and `stride_b` elements further) both
    /// ways on `stream`, into scratch outputs (the caller's stay as they
    /// are): after two warm-up rounds, the best of 5, the ways taking turns
    /// so that clocks still ramping up weigh on both alike. `None` while `stream`
    /// captures a graph, which must not time or synchronize; the batched
    /// GEMM when the scratch cannot be allocated (a full device).
    fn measure_pair(
        &self,
        inputs: GemmInputs,
        a: CUdeviceptr,
        b: CUdeviceptr,
        stride_b: i64,
        (m, k, n): (usize, usize, usize),
        stream: CUstream,
    ) -> Result<Option<PairWay>> {
        let on = Stream::borrowed(stream);
        if on.is_capturing()? {
            return Ok(None);
        }
        let bytes = inputs.dtype.bytes();
        let elements = m * n;
        // Scratch outputs; without the memory for them, the default way.
        let scratch = match DeviceBuffer::new(2 * elements * bytes) {
            Ok(scratch) => scratch,
            Err(error) => {
                tracing::warn!(
                    "matmul pair {m}x{k} @ 2 x {k}x{n}: no scratch to measure it ({error}); \
                     one batched GEMM"
                );
                return Ok(Some(PairWay::Batched));
            }
        };
        let c = scratch.ptr;
        let b1 = b + stride_b as u64 * bytes as u64;
        let c1 = c + (elements * bytes) as u64;
        let shape = (m, k, n);
        let batched = || {
            self.gemm_batched(
                inputs,
                [a, b, c],
                [stride_b, elements as i64],
                2,
                shape,
                0.0,
                stream,
            )
        };
        let two = || self.two_gemms(inputs, a, [[b, c], [b1, c1]], shape, 0.0, stream);
        // Each counted round behind a gate, so that it times the GPU's work
        // and not the host's pace of enqueuing it (two GEMMs cost the host
        // two cuBLAS calls); a round whose gate gave up waiting counts as
        // unmeasured. The warm-up rounds run ungated: cuBLAS's first call
        // of a kernel may wait on the host.
        let timer = GatedTimer::new()?;
        let time = |run: &dyn Fn() -> Result<()>, counted: bool| timer.time(&on, counted, run);
        let (mut batched_us, mut two_us) = (f64::MAX, f64::MAX);
        for round in 0..7 {
            let counted = round >= 2;
            let (b, t) = (time(&batched, counted)?, time(&two, counted)?);
            if counted {
                (batched_us, two_us) = (batched_us.min(b), two_us.min(t));
            }
        }
        let way = faster(batched_us, two_us);
        tracing::info!(
            "matmul pair {m}x{k} @ 2 x {k}x{n} {} ({}): batched {batched_us:.1} us, two GEMMs \
             {two_us:.1} us: {way:?}",
            inputs.dtype.text(),
            inputs.layout.text()
        );
        Ok(Some(way))
    }

    /// `batch` GEMMs `c_i = a @ b_i + beta * c_i`, `b_i` and `c_i` at
    /// `strides` elements from each other (`a` shared), each input dense
    /// as `inputs.layout` stores it.
    #[allow(clippy::too_many_arguments)]
    fn gemm_batched(
        &self,
        GemmInputs { dtype, layout }: GemmInputs,
        [a, b, c]: [CUdeviceptr; 3],
        [stride_b, stride_c]: [i64; 2],
        batch: i32,
        (m, k, n): (usize, usize, usize),
        beta: f32,
        stream: CUstream,
    ) -> Result<()> {
        let operand = |ptr, ld, batch_stride, transposed| Strided {
            ptr,
            dtype,
            ld,
            batch_stride,
            transposed,
        };
        let (a_t, b_t) = (layout.a_transposed(), layout.b_transposed());
        self.gemm_strided(
            [
                operand(a, if a_t { m } else { k }, 0, a_t),
                operand(b, if b_t { k } else { n }, stride_b, b_t),
                operand(c, n, stride_c, false),
            ],
            batch,
            (m, k, n),
            beta,
            stream,
        )
    }

    /// `batch` GEMMs `c_i = a_i @ b_i + beta * c_i` of row-major strided
    /// matrices (a_i m x k, b_i k x n, c_i m x n), accumulating in f32; the
    /// inputs share a dtype, the output may be f32 (split-K partials).
    pub fn gemm_strided(
        &self,
        [a, b, c]: [Strided; 3],
        batch: i32,
        (m, k, n): (usize, usize, usize),
        beta: f32,
        stream: CUstream,
    ) -> Result<()> {
        let data_type = |dtype: Dtype| match dtype {
            Dtype::F32 => cublas::cudaDataType::CUDA_R_32F,
            Dtype::F16 => cublas::cudaDataType::CUDA_R_16F,
            Dtype::Bf16 => cublas::cudaDataType::CUDA_R_16BF,
        };
        if a.dtype != b.dtype {
            return Err(Error::InvalidArgument(format!(
                "a matmul of {} by {}: cuBLAS takes one input type",
                a.dtype.text(),
                b.dtype.text()
            )));
        }
        if c.dtype != a.dtype && c.dtype != Dtype::F32 {
            return Err(Error::InvalidArgument(format!(
                "a matmul of {} into {}: the output is the inputs' type or f32",
                a.dtype.text(),
                c.dtype.text()
            )));
        }
        if m == 0 || n == 0 || batch == 0 {
            return Ok(());
        }
        let alpha = 1f32;
        let dim = |x: usize| {
            i32::try_from(x)
                .map_err(|_| Error::InvalidArgument(format!("{x} is too large for cuBLAS")))
        };
        let ld = |operand: &Strided, columns: usize| {
            if operand.ld < columns.max(1) {
                return Err(Error::InvalidArgument(format!(
                    "a matmul operand's row stride {} is shorter than its {columns} columns",
                    operand.ld
                )));
            }
            dim(operand.ld)
        };
        if c.transposed {
            return Err(Error::InvalidArgument(
                "a matmul's output is written row-major, never transposed".into(),
            ));
        }
        // A row-major m x k matrix is column-major k x m: its transpose.
        // So row-major C = A B is column-major C^T = B^T A^T, with b
        // first. An input stored transposed (b as n x k, a as k x m) is
        // read with op T, and its rows are as long as the other size.
        let op = |operand: &Strided| {
            if operand.transposed {
                cublas::cublasOperation_t::CUBLAS_OP_T
            } else {
                cublas::cublasOperation_t::CUBLAS_OP_N
            }
        };
        let b_columns = if b.transposed { k } else { n };
        let a_columns = if a.transposed { m } else { k };
        let (ldb, lda, ldc) = (ld(&b, b_columns)?, ld(&a, a_columns)?, ld(&c, n)?);
        let (n_, m_, k_) = (dim(n)?, dim(m)?, dim(k.max(1))?);
        // cuBLAS's default kernel, the output at `out`.
        let default = |out: CUdeviceptr| {
            // SAFETY: device matrices of the given shapes and strides
            // (`batch` of each, the output's at `out` as at `c`); a live
            // handle and stream.
            unsafe {
                check_blas(
                    cublas::cublasSetStream_v2(self.handle, stream.cast()),
                    "cublasSetStream",
                )?;
                // Whatever cuBLAS enqueued, the next compiled kernel
                // launches the ordinary way (programmatic_launch).
                crate::programmatic_launch::after_library_kernel();
                check_blas(
                    cublas::cublasGemmStridedBatchedEx(
                        self.handle,
                        op(&b),
                        op(&a),
                        n_,
                        m_,
                        k_,
                        (&alpha as *const f32).cast(),
                        b.ptr as *const std::ffi::c_void,
                        data_type(b.dtype),
                        ldb,
                        b.batch_stride,
                        a.ptr as *const std::ffi::c_void,
                        data_type(a.dtype),
                        lda,
                        a.batch_stride,
                        (&beta as *const f32).cast(),
                        out as *mut std::ffi::c_void,
                        data_type(c.dtype),
                        ldc,
                        c.batch_stride,
                        batch,
                        cublas::cublasComputeType_t::CUBLAS_COMPUTE_32F,
                        cublas::cublasGemmAlgo_t::CUBLAS_GEMM_DEFAULT,
                    ),
                    "cublasGemmStridedBatchedEx",
                )
            }
        };
        match &self.algos {
            Some(algos) if k > 0 => algos.run(
                &Gemm {
                    a,
                    b,
                    c,
                    batch,
                    shape: (m, k, n),
                    beta,
                },
                stream,
                &default,
            ),
            _ => default(c.ptr),
        }
    }
}

/// For a pair of (weight, output) addresses: which comes first in the
/// batch and the batch strides, in elements of `element_bytes`, from it to
/// the other; `None` when a distance is not whole elements or the two
/// distances differ in sign (no order makes both strides non-negative).
pub fn pair_strides(
    element_bytes: u64,
    first: [u64; 2],
    second: [u64; 2],
) -> Option<(usize, [i64; 2])> {
    let distance = |from: u64, to: u64| -> Option<i64> {
        let bytes = i64::try_from(to as i128 - from as i128).ok()?;
        (bytes % element_bytes as i64 == 0).then(|| bytes / element_bytes as i64)
    };
    let b = distance(first[0], second[0])?;
    let c = distance(first[1], second[1])?;
    match (b >= 0, c >= 0) {
        (true, true) => Some((0, [b, c])),
        (false, false) => Some((1, [-b, -c])),
        _ => None,
    }
}

impl Drop for Matmul {
    fn drop(&mut self) {
        // SAFETY: created in `new`.
        unsafe {
            cublas::cublasDestroy_v2(self.handle);
        }
    }
}

/// A row shard: `dtype` elements at `offset` bytes into every rank's copy
/// of `buffer`.
#[derive(Clone, Copy)]
pub struct Shard<'a> {
    pub buffer: &'a SymmetricBuffer,
    pub offset: usize,
    pub dtype: Dtype,
}

/// The ring: copy streams, one event per step, and the matmul handle.
pub struct AllGatherMatmul {
    pub matmul: Matmul,
    copy_streams: [Stream; 2],
    events: Vec<Event>,
}

// SAFETY: driver handles, used by their owner only.
unsafe impl Send for AllGatherMatmul {}

impl AllGatherMatmul {
    pub fn new(world: usize) -> Result<Self> {
        Ok(Self {
            matmul: Matmul::new()?,
            copy_streams: [Stream::new()?, Stream::new()?],
            events: (0..=world)
                .map(|_| Event::ordering())
                .collect::<Result<_>>()?,
        })
    }

    /// `out (W*m x n) = all_gather(a) @ b` on `stream` for bf16 shards at
    /// the start of `a`; `gathered` (W*m x k) receives the peers' shards.
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        &self,
        collectives: &Collectives,
        a: &SymmetricBuffer,
        b: CUdeviceptr,
        gathered: CUdeviceptr,
        out: CUdeviceptr,
        shape: (usize, usize, usize),
        stream: &Stream,
    ) -> Result<()> {
        let shard = Shard {
            buffer: a,
            offset: 0,
            dtype: Dtype::Bf16,
        };
        self.run_shard(collectives, &shard, b, gathered, out, shape, stream)
    }

    /// As `run`, for a shard of any dtype at `shard.offset` bytes into its
    /// symmetric buffer (a view into a planned pool).
    #[allow(clippy::too_many_arguments)]
    pub fn run_shard(
        &self,
        collectives: &Collectives,
        shard: &Shard,
        b: CUdeviceptr,
        gathered: CUdeviceptr,
        out: CUdeviceptr,
        (m, k, n): (usize, usize, usize),
        stream: &Stream,
    ) -> Result<()> {
        let Shard {
            buffer: a,
            offset,
            dtype,
        } = *shard;
        let (rank, world) = (a.rank, a.world_size());
        let size = dtype.bytes();
        let shard_bytes = m * k * size;
        if offset + shard_bytes > a.bytes {
            return Err(Error::InvalidArgument(format!(
                "a shard of {m} x {k} {dtype:?} at byte {offset} does not fit the {} bytes of '{}'",
                a.bytes, a.id
            )));
        }
        if world + 1 > self.events.len() {
            return Err(Error::InvalidArgument(format!(
                "built for {} ranks, called with {world}",
                self.events.len() - 1
            )));
        }
        collectives.barrier(a, stream.raw)?;
        self.events[0].record(stream)?;
        // Only the streams that get a copy wait: under graph capture a
        // stream that joins must be joined back, and only copies are.
        for (index, copy) in self.copy_streams.iter().enumerate() {
            if (1..world).any(|step| step % 2 == index) {
                copy.wait(&self.events[0])?;
            }
        }
        let gemm = |a_rows: CUdeviceptr, source: usize| {
            let c = out + (source * m * n * size) as u64;
            self.matmul
                .gemm(dtype, [a_rows, b, c], (m, k, n), 0.0, stream.raw)
        };
        gemm(a.local() + offset as u64, rank)?;
        for step in 1..world {
            let source = (rank + step) % world;
            let copy = &self.copy_streams[step % 2];
            let peer = a.peer(source).ok_or_else(|| {
                Error::InvalidArgument("all_gather_matmul needs peer access".into())
            })? + offset as u64;
            let chunk = gathered + (source * shard_bytes) as u64;
            // SAFETY: `peer` maps a shard of `shard_bytes` (checked above)
            // and `gathered` holds W of them; the stream is ours.
            check(
                unsafe { sys::cuMemcpyDtoDAsync_v2(chunk, peer, shard_bytes, copy.raw) },
                "cuMemcpyDtoDAsync",
            )?;
            self.events[step].record(copy)?;
            stream.wait(&self.events[step])?;
            gemm(chunk, source)?;
        }
        // Every copy has landed (the stream waited on each); peers may now
        // reuse their shards once everyone is here.
        collectives.barrier(a, stream.raw)
    }
}

#[cfg(test)]
mod tests {
    use super::pair_strides;

    #[test]
    fn pair_strides_order_the_batch_so_both_strides_are_non_negative() {
        // up after gate, outputs in the same order: gate first.
        assert_eq!(
            pair_strides(2, [0x1000, 0x9000], [0x3000, 0x9800]),
            Some((0, [0x1000, 0x400]))
        );
        // Both in the other order: up first.
        assert_eq!(
            pair_strides(2, [0x3000, 0x9800], [0x1000, 0x9000]),
            Some((1, [0x1000, 0x400]))
        );
        // Crossed orders: no batch stride works.
        assert_eq!(pair_strides(2, [0x1000, 0x9800], [0x3000, 0x9000]), None);
        // A distance of half an element.
        assert_eq!(pair_strides(4, [0x1000, 0], [0x1002, 0x100]), None);
        // The same weight twice is a stride of 0.
        assert_eq!(
            pair_strides(2, [0x1000, 0], [0x1000, 0x100]),
            Some((0, [0, 0x80]))
        );
    }
}
