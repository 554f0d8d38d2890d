//! Launching the signal-pad kernels on symmetric buffers.

use crate::{
    cuda::{CUdeviceptr, CUstream, DeviceBuffer, KernelCache, launch},
    error::{Error, Result},
    group::Group,
    library::{self, Algorithm, Dtype, MAX_BLOCKS, MAX_WORLD, ReduceOp, THREADS},
    nccl::NcclComm,
    symmetric::SymmetricBuffer,
};
use std::{ffi::c_void, time::Duration};
use symm_protocol::library::{AllReduce, Kernel, Variant, grid_blocks, lamport_takes};

const _: () = assert!(
    cfg!(target_endian = "little"),
    "kernel parameters are packed for little-endian hosts"
);

/// Kernel parameters, each in its own 8-byte slot (a u32 or f32 in the
/// slot's first bytes, which is where a little-endian load finds it), so
/// the pointers handed to cuLaunchKernel all stay valid.
#[derive(Default)]
struct Params {
    slots: Vec<u64>,
}

impl Params {
    fn u64(&mut self, value: u64) -> &mut Self {
        self.slots.push(value);
        self
    }

    fn f32(&mut self, value: f32) -> &mut Self {
        self.slots.push(u64::from(value.to_bits()));
        self
    }

    /// # Safety
    /// The slots must match the kernel's parameters in order and type.
    unsafe fn launch(
        mut self,
        function: cudarc::driver::sys::CUfunction,
        blocks: u32,
        threads: u32,
        stream: CUstream,
    ) -> Result<()> {
        let mut pointers: Vec<*mut c_void> = self
            .slots
            .iter_mut()
            .map(|slot| (slot as *mut u64).cast())
            .collect();
        // SAFETY: per this function's contract; `self.slots` outlives the call.
        unsafe { launch(function, blocks, threads, stream, &mut pointers) }
    }
}

/// A block per row, at most one per pad channel (blocks stride the rows).
fn row_blocks(rows: usize) -> u32 {
    rows.clamp(1, MAX_BLOCKS) as u32
}

/// The kernels access 16-byte vectors.
fn check_aligned(pointers: &[(CUdeviceptr, &str)]) -> Result<()> {
    match pointers.iter().find(|(p, _)| !p.is_multiple_of(16)) {
        Some((pointer, what)) => Err(Error::InvalidArgument(format!(
            "the {what} {pointer:#x} is not 16-byte aligned"
        ))),
        None => Ok(()),
    }
}

fn check_rows(rows: usize, hidden: usize, capacity: usize) -> Result<()> {
    if hidden == 0 || !hidden.is_multiple_of(8) || hidden > u32::MAX as usize {
        return Err(Error::InvalidArgument(format!(
            "RMSNorm rows need a hidden size that is a positive multiple of 8, not {hidden}"
        )));
    }
    if rows.saturating_mul(hidden).saturating_mul(2) > capacity {
        return Err(Error::InvalidArgument(format!(
            "{rows} rows of {hidden} bf16 do not fit {capacity} bytes"
        )));
    }
    Ok(())
}

/// Kernels, the error flag that kernels set when a peer times out, and
/// the NCCL communicator for groups without peer access.
pub struct Collectives {
    kernels: KernelCache,
    error_flag: DeviceBuffer,
    nccl: Option<NcclComm>,
    pub timeout: Duration,
    /// Cap on an all-reduce's grid (at most `MAX_BLOCKS`, the pad's
    /// channels); probes sweep it.
    max_blocks: u32,
    /// One-shot sums of bf16 or f16 up to this many bytes take the Lamport
    /// kernel (`SYMM_LAMPORT_MAX_BYTES`, 0: never; at most `LAMPORT_MAX`).
    lamport_max: usize,
}

/// `SYMM_LAMPORT_MAX_BYTES`: the largest Lamport all-reduce (0 turns the
/// kernel off), `LAMPORT_MAX` when unset; a value that is not a number is
/// an error rather than silently the default.
fn lamport_max_from_env() -> Result<usize> {
    lamport_max(std::env::var(LAMPORT_ENV).ok().as_deref())
}

/// The Lamport limit for `SYMM_LAMPORT_MAX_BYTES`'s value (`None`: unset).
fn lamport_max(value: Option<&str>) -> Result<usize> {
    match value {
        None => Ok(symm_protocol::LAMPORT_MAX),
        Some(text) => text
            .trim()
            .parse::<usize>()
            .map(|bytes| bytes.min(symm_protocol::LAMPORT_MAX))
            .map_err(|_| {
                Error::InvalidArgument(format!(
                    "{LAMPORT_ENV}={text:?} is not a byte count (0 turns the Lamport all-reduce off)"
                ))
            }),
    }
}

/// The environment variable that bounds the library's Lamport all-reduce.
pub const LAMPORT_ENV: &str = "SYMM_LAMPORT_MAX_BYTES";

impl Collectives {
    /// Kernels only (every buffer must have peer access).
    pub fn new(timeout: Duration) -> Result<Self> {
        let error_flag = DeviceBuffer::new(4)?;
        error_flag.zero()?;
        Ok(Self {
            kernels: KernelCache::default(),
            error_flag,
            nccl: None,
            timeout,
            max_blocks: MAX_BLOCKS as u32,
            lamport_max: lamport_max_from_env()?,
        })
    }

    /// For `group`: with an NCCL communicator when its ranks cannot map
    /// each other's memory. Collective.
    pub fn for_group(group: &mut Group, timeout: Duration) -> Result<Self> {
        let mut collectives = Self::new(timeout)?;
        if !group.peer_access {
            tracing::info!("no peer access between the ranks: all-reduces go through NCCL");
            collectives.nccl = Some(NcclComm::init(group)?);
        }
        Ok(collectives)
    }

    /// Caps all-reduce grids at `blocks` (clamped to 1..=MAX_BLOCKS).
    pub fn set_max_blocks(&mut self, blocks: u32) {
        self.max_blocks = blocks.clamp(1, MAX_BLOCKS as u32);
    }

    /// All-reduce of `elements` elements of `input` (a symmetric buffer)
    /// into `out` (16-byte aligned). Two-shot pushes reduced chunks into
    /// every peer's input, so it clobbers `input`; `out` may be
    /// `input.local()` (in place, its fastest form: no copy out of the
    /// input afterwards). A one-shot runs in place only if it takes the
    /// Lamport kernel or the input fits the buffer's staging slot.
    #[allow(clippy::too_many_arguments)]
    pub fn all_reduce(
        &self,
        input: &SymmetricBuffer,
        out: CUdeviceptr,
        elements: usize,
        dtype: Dtype,
        op: ReduceOp,
        algorithm: Algorithm,
        stream: CUstream,
    ) -> Result<()> {
        if elements * dtype.bytes() > input.bytes {
            return Err(Error::InvalidArgument(format!(
                "{elements} {dtype:?} elements do not fit the {} bytes of '{}'",
                input.bytes, input.id
            )));
        }
        if !input.p2p {
            let nccl = self.nccl.as_ref().ok_or_else(|| {
                Error::InvalidArgument(format!(
                    "'{}' has no peer access and no NCCL communicator was set up \
                     (use Collectives::for_group)",
                    input.id
                ))
            })?;
            return nccl.all_reduce(input.local(), out, elements, dtype, op, stream);
        }
        let world = input.world_size();
        if !(1..=MAX_WORLD).contains(&world) {
            return Err(Error::InvalidArgument(format!(
                "the signal-pad kernels support 1 to {MAX_WORLD} ranks, not {world}"
            )));
        }
        check_aligned(&[(out, "all-reduce output")])?;
        let bytes = elements * dtype.bytes();
        // Small sums of whole 16-byte vectors of bf16 or f16 need no barrier
        // (the Lamport kernel), on a grid that must not be capped (each
        // vector stays in the block the full grid keeps it in, at every
        // size: `lamport_takes`); other small one-shots go
        // through the staging slots: one barrier, not two.
        let vectors = bytes / 16;
        let lamport = algorithm == Algorithm::OneShot
            && bytes.is_multiple_of(16)
            && lamport_takes(dtype, op, bytes, self.lamport_max.min(input.lamport_region))
            && grid_blocks(vectors, Variant::Lamport.threads() as usize, MAX_BLOCKS)
                <= self.max_blocks as usize;
        let variant = match algorithm {
            Algorithm::OneShot if lamport => Variant::Lamport,
            Algorithm::OneShot if input.fits_staging(bytes) => Variant::OneShotStaged,
            Algorithm::OneShot => Variant::OneShot,
            Algorithm::TwoShot => Variant::TwoShot,
        };
        // The plain one-shot reads every peer's input while they write
        // their results: in place, a peer could read a result.
        if variant == Variant::OneShot && out == input.local() {
            return Err(Error::InvalidArgument(format!(
                "a one-shot all-reduce of {} bytes cannot run in place on '{}' (only up to \
                 its staging slot's {} bytes); use the two-shot, or another output",
                bytes, input.id, input.staging_slot
            )));
        }
        let key = |tail| {
            Kernel::AllReduce(AllReduce {
                variant,
                dtype,
                reduce: op,
                world: world as u8,
                tail,
            })
        };
        // Whole vectors take the kernel without a tail, and a vector count.
        let mut entry = library::find(key(false))?;
        let vectors = elements / entry.vector;
        let mut count = vectors;
        if !elements.is_multiple_of(entry.vector) {
            entry = library::find(key(true))?;
            count = elements;
        }
        let per_rank = match variant {
            Variant::TwoShot => vectors.div_ceil(world),
            _ => vectors,
        };
        let blocks =
            grid_blocks(per_rank, variant.threads() as usize, variant.most_blocks()) as u32;
        tracing::debug!(
            "all-reduce of {} B on '{}': {} ({} blocks)",
            bytes,
            input.id,
            entry.name,
            blocks.min(self.max_blocks)
        );
        let mut params = Params::default();
        params
            .u64(self.descriptor(input)?)
            .u64(input.local())
            .u64(out)
            .u64(count as u64);
        // A library all-reduce takes its descriptor, input, out, count.
        self.launch_library(
            entry,
            (blocks.min(self.max_blocks), variant.threads()),
            params,
            stream,
        )
    }

    /// Launches a library kernel on `blocks` blocks of `threads` with
    /// `params`, which must be what its `Kernel` documents.
    fn launch_library(
        &self,
        entry: &library::Entry,
        (blocks, threads): (u32, u32),
        params: Params,
        stream: CUstream,
    ) -> Result<()> {
        let function = self.kernels.get(entry.name, || entry.ptx.to_owned())?;
        // SAFETY: per this function's contract.
        unsafe { params.launch(function, blocks, threads, stream) }
    }

    /// Device address of `buffer`'s descriptor with this timeout and error flag.
    pub fn descriptor(&self, buffer: &SymmetricBuffer) -> Result<CUdeviceptr> {
        let timeout = self.timeout.as_nanos().min(u64::MAX as u128) as u64;
        buffer.descriptor(timeout, self.error_flag.ptr)
    }

    /// `out = rmsnorm(all_reduce(input)) * gamma` per row of `hidden` bf16
    /// elements, in one kernel (the fused epilogue).
    #[allow(clippy::too_many_arguments)]
    pub fn all_reduce_rmsnorm(
        &self,
        input: &SymmetricBuffer,
        gamma: CUdeviceptr,
        out: CUdeviceptr,
        rows: usize,
        hidden: usize,
        eps: f32,
        stream: CUstream,
    ) -> Result<()> {
        check_rows(rows, hidden, input.bytes)?;
        check_aligned(&[(out, "output"), (gamma, "gamma")])?;
        let world = input.world_size();
        if !(1..=MAX_WORLD).contains(&world) {
            return Err(Error::InvalidArgument(format!(
                "the signal-pad kernels support 1 to {MAX_WORLD} ranks, not {world}"
            )));
        }
        // Like the one-shot: inputs that fit the staging slots take one barrier.
        let staged = input.fits_staging(rows * hidden * 2);
        let entry = library::find(Kernel::AllReduceRmsNorm {
            staged,
            world: world as u8,
        })?;
        let mut params = Params::default();
        params
            .u64(self.descriptor(input)?)
            .u64(input.local())
            .u64(out)
            .u64(rows as u64)
            .u64(gamma)
            .u64(hidden as u64)
            .f32(eps);
        self.launch_library(entry, (row_blocks(rows), THREADS), params, stream)
    }

    /// RMSNorm alone (after a separate all-reduce): `out = rmsnorm(x) * gamma`.
    #[allow(clippy::too_many_arguments)]
    pub fn rmsnorm(
        &self,
        x: CUdeviceptr,
        gamma: CUdeviceptr,
        out: CUdeviceptr,
        rows: usize,
        hidden: usize,
        eps: f32,
        stream: CUstream,
    ) -> Result<()> {
        check_rows(rows, hidden, usize::MAX)?;
        check_aligned(&[(x, "input"), (out, "output"), (gamma, "gamma")])?;
        let mut params = Params::default();
        params
            .u64(x)
            .u64(out)
            .u64(rows as u64)
            .u64(gamma)
            .u64(hidden as u64)
            .f32(eps);
        self.launch_library(
            library::find(Kernel::RmsNorm)?,
            (row_blocks(rows), THREADS),
            params,
            stream,
        )
    }

    /// A barrier of every rank of `buffer`'s group, enqueued on `stream`.
    pub fn barrier(&self, buffer: &SymmetricBuffer, stream: CUstream) -> Result<()> {
        let mut params = Params::default();
        params.u64(self.descriptor(buffer)?);
        self.launch_library(
            library::find(Kernel::Barrier)?,
            (1, THREADS),
            params,
            stream,
        )
    }

    /// Runs the barrier stress kernel: `iterations` rounds; returns through
    /// `mismatches` (a device u32) how many peer reads saw a stale value.
    pub fn barrier_test(
        &self,
        buffer: &SymmetricBuffer,
        mismatches: CUdeviceptr,
        iterations: u64,
        stream: CUstream,
    ) -> Result<()> {
        let mut params = Params::default();
        params
            .u64(self.descriptor(buffer)?)
            .u64(buffer.local())
            .u64(mismatches)
            .u64(iterations);
        self.launch_library(
            library::find(Kernel::BarrierTest)?,
            (1, THREADS),
            params,
            stream,
        )
    }

    /// After a synchronize: fails if any kernel gave up waiting for a peer
    /// (and clears the flag).
    pub fn check_peers(&self, what: &str) -> Result<()> {
        let flag: Vec<u32> = self.error_flag.read_synchronized(1)?;
        if flag.first().copied().unwrap_or(0) != 0 {
            self.error_flag.zero()?;
            return Err(Error::PeerTimeout {
                what: what.to_owned(),
                seconds: self.timeout.as_secs_f64(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lamport_limit_comes_from_the_environment_or_is_refused() {
        assert_eq!(lamport_max(None).unwrap(), symm_protocol::LAMPORT_MAX);
        assert_eq!(lamport_max(Some("0")).unwrap(), 0);
        assert_eq!(lamport_max(Some(" 8192 ")).unwrap(), 8192);
        // Above the protocol's regions: capped.
        assert_eq!(
            lamport_max(Some("99999999")).unwrap(),
            symm_protocol::LAMPORT_MAX
        );
        let error = lamport_max(Some("lots")).unwrap_err().to_string();
        assert!(
            error.contains("SYMM_LAMPORT_MAX_BYTES=\"lots\" is not a byte count"),
            "{error}"
        );
    }

    #[test]
    fn lamport_library_kernels_are_bf16_and_f16_sums_of_whole_vectors() {
        assert!(Variant::Lamport.takes(Dtype::Bf16, ReduceOp::Sum, false));
        assert!(Variant::Lamport.takes(Dtype::F16, ReduceOp::Sum, false));
        assert!(!Variant::Lamport.takes(Dtype::F32, ReduceOp::Sum, false));
        assert!(!Variant::Lamport.takes(Dtype::Bf16, ReduceOp::Max, false));
        assert!(!Variant::Lamport.takes(Dtype::Bf16, ReduceOp::Sum, true));
        assert_eq!(Variant::Lamport.threads(), symm_protocol::LAMPORT_THREADS);
        // 512 KiB: 32768 vectors on 256 blocks of 128, within the channels.
        assert_eq!(
            grid_blocks(32768, Variant::Lamport.threads() as usize, MAX_BLOCKS),
            256
        );
    }
}
