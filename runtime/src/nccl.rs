//! The fallback beyond one NVLink domain: when the ranks of a group cannot
//! map each other's memory (different hosts, or `SYMM_FORCE_NCCL=1`), the
//! same all-reduce API runs on NCCL. libnccl is loaded at run time.

use crate::{
    cuda::{CUdeviceptr, CUstream},
    error::{Error, Result},
    group::Group,
    library::{Dtype, ReduceOp},
};
use cudarc::nccl::sys;

fn check(status: sys::ncclResult_t, what: &str) -> Result<()> {
    if status == sys::ncclResult_t::ncclSuccess {
        Ok(())
    } else {
        Err(Error::Nccl {
            what: what.to_owned(),
            status,
        })
    }
}

/// One NCCL communicator over the whole group.
pub struct NcclComm {
    comm: sys::ncclComm_t,
}

// SAFETY: a communicator is used from one thread at a time by its owner.
unsafe impl Send for NcclComm {}

impl NcclComm {
    /// Collective: rank 0 makes the unique id, the store carries it.
    pub fn init(group: &mut Group) -> Result<Self> {
        // SAFETY: probing the library; nothing is called if it is absent.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::Cuda(
                "the NCCL fallback needs libnccl.so (put its folder on LD_LIBRARY_PATH)".into(),
            ));
        }
        let (rank, world, timeout) = (group.rank(), group.world_size(), group.config.timeout);
        // SAFETY: a zeroed id is the documented starting point.
        let mut id: sys::ncclUniqueId = unsafe { std::mem::zeroed() };
        if rank == 0 {
            // SAFETY: out-pointer to a local.
            check(unsafe { sys::ncclGetUniqueId(&mut id) }, "ncclGetUniqueId")?;
            let bytes: Vec<u8> = id.internal.iter().map(|&b| b as u8).collect();
            group.store.set("nccl/id", &bytes)?;
        } else {
            let bytes = group.store.get("nccl/id", timeout)?;
            if bytes.len() != id.internal.len() {
                return Err(Error::Store("malformed NCCL id".into()));
            }
            for (slot, byte) in id.internal.iter_mut().zip(bytes) {
                *slot = byte as _;
            }
        }
        let mut comm = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; every rank passes the same id.
        check(
            unsafe { sys::ncclCommInitRank(&mut comm, world as i32, id, rank as i32) },
            "ncclCommInitRank",
        )?;
        Ok(Self { comm })
    }

    /// Every rank's `bytes` bytes of `input`, concatenated in rank order
    /// into `out`.
    pub fn all_gather(
        &self,
        input: CUdeviceptr,
        out: CUdeviceptr,
        bytes: usize,
        stream: CUstream,
    ) -> Result<()> {
        // SAFETY: `input` holds `bytes`, `out` W times that; a live stream.
        check(
            unsafe {
                sys::ncclAllGather(
                    input as *const std::ffi::c_void,
                    out as *mut std::ffi::c_void,
                    bytes,
                    sys::ncclDataType_t::ncclUint8,
                    self.comm,
                    stream.cast(),
                )
            },
            "ncclAllGather",
        )
    }

    pub fn all_reduce(
        &self,
        input: CUdeviceptr,
        out: CUdeviceptr,
        elements: usize,
        dtype: Dtype,
        op: ReduceOp,
        stream: CUstream,
    ) -> Result<()> {
        let datatype = match dtype {
            Dtype::F32 => sys::ncclDataType_t::ncclFloat32,
            Dtype::F16 => sys::ncclDataType_t::ncclFloat16,
            Dtype::Bf16 => sys::ncclDataType_t::ncclBfloat16,
        };
        let op = match op {
            ReduceOp::Sum => sys::ncclRedOp_t::ncclSum,
            ReduceOp::Max => sys::ncclRedOp_t::ncclMax,
            ReduceOp::Min => sys::ncclRedOp_t::ncclMin,
        };
        // SAFETY: device buffers of `elements` elements; a live stream.
        check(
            unsafe {
                sys::ncclAllReduce(
                    input as *const std::ffi::c_void,
                    out as *mut std::ffi::c_void,
                    elements,
                    datatype,
                    op,
                    self.comm,
                    stream.cast(),
                )
            },
            "ncclAllReduce",
        )
    }
}

impl Drop for NcclComm {
    fn drop(&mut self) {
        // SAFETY: created in `init`.
        unsafe {
            sys::ncclCommDestroy(self.comm);
        }
    }
}
