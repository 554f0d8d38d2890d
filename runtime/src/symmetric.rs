//! Symmetric allocation (DESIGN §6): every rank creates the same number of
//! bytes with `cuMemCreate`, exports a POSIX file descriptor, passes it to
//! every peer over `AF_UNIX` with `SCM_RIGHTS`, and maps every peer's
//! allocation into its own address space. Each allocation ends in a
//! signal pad. The device-side tables of peer pointers are plain
//! `cuMemAlloc` memory, outside any graph pool, freed on drop.

use crate::{
    cuda::{CUdeviceptr, DeviceBuffer, check},
    error::{Error, Result},
    group::{Group, agree_on_size},
    library::PAD_BYTES,
};
use cudarc::driver::sys;
use std::{
    os::fd::{AsRawFd, FromRawFd, OwnedFd},
    sync::Mutex,
};

fn allocation_prop(device: i32) -> sys::CUmemAllocationProp {
    // SAFETY: an all-zero prop is the documented starting point.
    let mut prop: sys::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = sys::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.requestedHandleTypes =
        sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    prop.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    prop
}

/// Allocation granularity for symmetric buffers on `device`.
pub fn granularity(device: i32) -> Result<usize> {
    let prop = allocation_prop(device);
    let mut granularity = 0usize;
    // SAFETY: out-pointer to a local, valid prop.
    check(
        unsafe {
            sys::cuMemGetAllocationGranularity(
                &mut granularity,
                &prop,
                sys::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
            )
        },
        "cuMemGetAllocationGranularity",
    )?;
    Ok(granularity.max(1))
}

/// One rank's mapping of one rank's allocation (none for a peer whose
/// memory cannot be mapped here).
struct Mapping {
    address: CUdeviceptr,
    handle: Option<sys::CUmemGenericAllocationHandle>,
}

/// A buffer every rank of a group allocated together, mapped from all.
pub struct SymmetricBuffer {
    pub id: String,
    /// Usable bytes (the pad follows them).
    pub bytes: usize,
    mapped_bytes: usize,
    pub rank: usize,
    /// Peers' copies are mapped here; otherwise collectives use NCCL.
    pub p2p: bool,
    mappings: Vec<Mapping>,
    /// Device table: u64 address of each rank's buffer.
    pub buffer_table: DeviceBuffer,
    /// Device table: u64 address of each rank's signal pad.
    pub pad_table: DeviceBuffer,
    /// Two staging slots of `staging_slot` bytes each, at this offset in
    /// every rank's copy, for the staged one-shot (no closing barrier).
    pub staging_offset: usize,
    pub staging_slot: usize,
    /// The Lamport one-shot's area at this offset in every rank's copy:
    /// `2 * world` regions of `lamport_region` bytes, each lane the
    /// sentinel wherever no data waits to be read.
    pub lamport_offset: usize,
    pub lamport_region: usize,
    /// This rank's per-block call counters (u32), choosing the slot.
    pub epochs: CUdeviceptr,
    /// Its kernel descriptors in device memory, one per (timeout, error
    /// flag) asked for (`descriptor`); kept as long as the buffer, since
    /// kernels in flight or in CUDA graphs read them.
    descriptors: Mutex<Vec<(u64, CUdeviceptr, DeviceBuffer)>>,
}

impl SymmetricBuffer {
    /// The words of this buffer's kernel descriptor
    /// (`symm_protocol::Descriptor`): what every symmetric-memory kernel
    /// reads of it, compiled or from the library. A wait gives up after
    /// `timeout_ns` and sets the u32 at `error_flag`.
    fn descriptor_words(
        &self,
        timeout_ns: u64,
        error_flag: CUdeviceptr,
    ) -> [u64; symm_protocol::DESCRIPTOR_WORDS] {
        use symm_protocol::Descriptor;
        let mut words = [0u64; symm_protocol::DESCRIPTOR_WORDS];
        words[Descriptor::Bases as usize] = self.buffer_table.ptr;
        words[Descriptor::Pads as usize] = self.pad_table.ptr;
        words[Descriptor::Staging as usize] = self.staging_offset as u64;
        words[Descriptor::Slot as usize] = self.staging_slot as u64;
        words[Descriptor::Epochs as usize] = self.epochs;
        words[Descriptor::Rank as usize] = self.rank as u64;
        words[Descriptor::World as usize] = self.world_size() as u64;
        words[Descriptor::Timeout as usize] = timeout_ns;
        words[Descriptor::Error as usize] = error_flag;
        words[Descriptor::Lamport as usize] = self.lamport_offset as u64;
        words[Descriptor::LamportRegion as usize] = self.lamport_region as u64;
        words
    }

    /// Device address of this buffer's kernel descriptor (its
    /// `descriptor_words` for its world), written on first use with these
    /// settings (also while a graph is being captured: it is not part of
    /// the graph): what every kernel on it, compiled or from the library,
    /// is given.
    pub fn descriptor(&self, timeout_ns: u64, error_flag: CUdeviceptr) -> Result<CUdeviceptr> {
        let mut descriptors = self.descriptors.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, _, buffer)) = descriptors
            .iter()
            .find(|(t, flag, _)| (*t, *flag) == (timeout_ns, error_flag))
        {
            return Ok(buffer.ptr);
        }
        let words = self.descriptor_words(timeout_ns, error_flag);
        // A buffer's first collective may be in a graph being captured.
        let buffer = crate::cuda::device_slice_outside_capture(&words)?;
        let ptr = buffer.ptr;
        descriptors.push((timeout_ns, error_flag, buffer));
        Ok(ptr)
    }

    /// Collective: every rank of `group` calls it with the same `id` and
    /// `bytes`; a size mismatch fails on every rank. Where the group has no
    /// peer access, only this rank's copy is mapped.
    pub fn allocate(group: &mut Group, device: i32, id: &str, bytes: usize) -> Result<Self> {
        agree_on_size(group, id, bytes as u64)?;
        let (rank, world, timeout) = (group.rank(), group.world_size(), group.config.timeout);
        // Layout: data | 2 staging slots | Lamport area | signal pad | epoch
        // counters.
        let (staging_offset, staging_slot) = symm_protocol::staging_layout(bytes);
        let (lamport_offset, lamport_region, lamport_bytes) =
            symm_protocol::lamport_layout(bytes, staging_offset + 2 * staging_slot, world);
        let pad_offset = lamport_offset + lamport_bytes;
        let epochs_offset = pad_offset + PAD_BYTES;
        let mapped_bytes =
            (epochs_offset + symm_protocol::EPOCH_BYTES).next_multiple_of(granularity(device)?);
        let prop = allocation_prop(device);

        let mut own = 0;
        // SAFETY: out-pointer to a local and a valid prop.
        check(
            unsafe { sys::cuMemCreate(&mut own, mapped_bytes, &prop, 0) },
            "cuMemCreate",
        )?;
        let p2p = group.peer_access;
        let shared = if p2p {
            share(group, own, id)
        } else {
            Ok(Vec::new())
        };
        let mut peer_fds = match shared {
            Ok(fds) => fds.into_iter(),
            Err(error) => {
                // SAFETY: nothing maps `own` yet.
                unsafe { sys::cuMemRelease(own) };
                return Err(error);
            }
        };

        let mut buffer = Self {
            id: id.to_owned(),
            bytes,
            mapped_bytes,
            rank,
            p2p,
            mappings: Vec::with_capacity(world),
            buffer_table: DeviceBuffer::new(8 * world)?,
            pad_table: DeviceBuffer::new(8 * world)?,
            staging_offset,
            staging_slot,
            lamport_offset,
            lamport_region,
            epochs: 0,
            descriptors: Mutex::new(Vec::new()),
        };
        for owner in 0..world {
            if owner != rank && !p2p {
                buffer.mappings.push(Mapping {
                    address: 0,
                    handle: None,
                });
                continue;
            }
            let handle = if owner == rank {
                own
            } else {
                let fd = peer_fds
                    .next()
                    .ok_or_else(|| Error::Store(format!("no descriptor from rank {owner}")))?;
                import(&fd)?
            };
            // Pushed before mapping, so Drop releases it whatever happens.
            buffer.mappings.push(Mapping {
                address: 0,
                handle: Some(handle),
            });
            let address = map(handle, mapped_bytes, device)?;
            if let Some(last) = buffer.mappings.last_mut() {
                last.address = address;
            }
        }
        let buffers: Vec<u64> = buffer.mappings.iter().map(|m| m.address).collect();
        let pads: Vec<u64> = buffers.iter().map(|&b| b + pad_offset as u64).collect();
        buffer.buffer_table.write(&buffers)?;
        buffer.pad_table.write(&pads)?;
        buffer.epochs = buffers[rank] + epochs_offset as u64;
        // SAFETY: our own pad and counters, inside our mapping.
        check(
            unsafe { sys::cuMemsetD8_v2(pads[rank], 0, PAD_BYTES + symm_protocol::EPOCH_BYTES) },
            "cuMemsetD8(signal pad)",
        )?;
        // SAFETY: our own Lamport area, inside our mapping (2-byte aligned).
        check(
            unsafe {
                sys::cuMemsetD16_v2(
                    buffers[rank] + lamport_offset as u64,
                    symm_protocol::LAMPORT_SENTINEL,
                    lamport_bytes / 2,
                )
            },
            "cuMemsetD16(Lamport area)",
        )?;
        check(unsafe { sys::cuCtxSynchronize() }, "cuCtxSynchronize")?;
        // No peer may signal before every pad is zero.
        group
            .store
            .barrier(&format!("alloc/{id}/ready"), rank, world, timeout)?;
        tracing::info!(
            "symmetric buffer '{id}': {bytes} B of data, 2 staging slots of {staging_slot} B, \
             Lamport regions of {lamport_region} B, signal pad; {mapped_bytes} B mapped per rank, \
             {} ranks{}",
            world,
            if p2p {
                ", peers mapped"
            } else {
                ", no peer access"
            }
        );
        Ok(buffer)
    }

    /// This rank's copy.
    pub fn local(&self) -> CUdeviceptr {
        self.mappings[self.rank].address
    }

    /// Rank `peer`'s copy, mapped here.
    pub fn peer(&self, peer: usize) -> Option<CUdeviceptr> {
        self.mappings
            .get(peer)
            .filter(|m| m.handle.is_some())
            .map(|m| m.address)
    }

    pub fn world_size(&self) -> usize {
        self.mappings.len()
    }

    /// Whether `bytes` of input fit a staging slot (and so may take the
    /// staged one-shot kernels).
    pub fn fits_staging(&self, bytes: usize) -> bool {
        bytes <= self.staging_slot
    }
}

/// Exports `own` as a file descriptor, sends it to every peer and returns
/// theirs, in peer order.
fn share(
    group: &mut Group,
    own: sys::CUmemGenericAllocationHandle,
    id: &str,
) -> Result<Vec<OwnedFd>> {
    let mut raw_fd: libc::c_int = -1;
    // SAFETY: exports into a local int.
    let exported = check(
        unsafe {
            sys::cuMemExportToShareableHandle(
                (&mut raw_fd as *mut libc::c_int).cast(),
                own,
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
                0,
            )
        },
        "cuMemExportToShareableHandle",
    );
    exported?;
    // SAFETY: the driver handed us a fresh descriptor.
    let own_fd = unsafe { OwnedFd::from_raw_fd(raw_fd) };
    let tag = format!("alloc/{id}");
    for peer in group.peers() {
        group.fds.send(peer, &tag, own_fd.as_raw_fd())?;
    }
    let peers = group.peers();
    group.fds.receive(&tag, &peers, group.config.timeout)
}

fn import(fd: &OwnedFd) -> Result<sys::CUmemGenericAllocationHandle> {
    let mut handle = 0;
    // SAFETY: the driver takes the descriptor number as a pointer-sized value.
    check(
        unsafe {
            sys::cuMemImportFromShareableHandle(
                &mut handle,
                fd.as_raw_fd() as usize as *mut std::ffi::c_void,
                sys::CUmemAllocationHandleType::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR,
            )
        },
        "cuMemImportFromShareableHandle",
    )?;
    Ok(handle)
}

fn map(
    handle: sys::CUmemGenericAllocationHandle,
    bytes: usize,
    device: i32,
) -> Result<CUdeviceptr> {
    let mut address = 0;
    // SAFETY: reserve, map and grant access on a fresh range.
    unsafe {
        check(
            sys::cuMemAddressReserve(&mut address, bytes, 0, 0, 0),
            "cuMemAddressReserve",
        )?;
        if let Err(error) = check(sys::cuMemMap(address, bytes, 0, handle, 0), "cuMemMap") {
            sys::cuMemAddressFree(address, bytes);
            return Err(error);
        }
        let mut access: sys::CUmemAccessDesc = std::mem::zeroed();
        access.location.type_ = sys::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
        access.location.id = device;
        access.flags = sys::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if let Err(error) = check(
            sys::cuMemSetAccess(address, bytes, &access, 1),
            "cuMemSetAccess",
        ) {
            sys::cuMemUnmap(address, bytes);
            sys::cuMemAddressFree(address, bytes);
            return Err(error);
        }
    }
    Ok(address)
}

impl Drop for SymmetricBuffer {
    fn drop(&mut self) {
        for mapping in &self.mappings {
            let Some(handle) = mapping.handle else {
                continue;
            };
            // SAFETY: undoing `map` and the create/import of the handle.
            unsafe {
                if mapping.address != 0 {
                    sys::cuMemUnmap(mapping.address, self.mapped_bytes);
                    sys::cuMemAddressFree(mapping.address, self.mapped_bytes);
                }
                sys::cuMemRelease(handle);
            }
        }
    }
}
