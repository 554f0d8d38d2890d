//! TMA descriptors (`CUtensorMap`) of the matrices that generated kernels
//! stream with `cp.async.bulk.tensor` (`symm_mem.tensor_map`): one per
//! (address, sizes, box), encoded by the driver on first sight and kept in
//! device memory for the session's life, so that a CUDA graph that
//! recorded its address reads it on every replay.
//!
//! A descriptor is made only outside a stream capture (the copy to the
//! device synchronizes the context, which a capture forbids); a matrix
//! first seen while capturing gets 0, and the kernel's caller takes
//! another way for that call. Sizes the descriptor cannot describe also
//! get 0, never a descriptor of something else.

use crate::cuda::{DeviceBuffer, check};
use crate::error::Result;
use cudarc::driver::sys;
use std::collections::HashMap;

/// Bytes of a bf16 element.
const BF16: u64 = 2;
/// The swizzle's row: a box row is at most this many bytes.
const SWIZZLE_BYTES: u64 = 128;
/// The most rows (and columns) of a box.
const MAX_BOX: u64 = 256;
/// Global addresses and row strides are multiples of this.
const GLOBAL_ALIGNMENT: u64 = 16;

/// What a descriptor describes: a row-major bf16 matrix and the box the
/// kernel copies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TensorMapKey {
    pub address: u64,
    pub rows: u64,
    pub columns: u64,
    /// Elements between the starts of two rows.
    pub row_stride: u64,
    pub box_rows: u64,
    pub box_columns: u64,
}

impl TensorMapKey {
    /// Why no descriptor can describe this (`None`: one can).
    pub fn problem(&self) -> Option<String> {
        if self.address == 0 || !self.address.is_multiple_of(GLOBAL_ALIGNMENT) {
            return Some(format!(
                "address {:#x} is not a non-null multiple of 16",
                self.address
            ));
        }
        if self.rows == 0 || self.columns == 0 || self.rows >= 1 << 32 || self.columns >= 1 << 32 {
            return Some(format!("{} x {} elements", self.rows, self.columns));
        }
        if self.row_stride < self.columns
            || !(self.row_stride * BF16).is_multiple_of(GLOBAL_ALIGNMENT)
            || self.row_stride * BF16 >= 1 << 40
        {
            return Some(format!(
                "a row stride of {} elements for {} columns (whole 16-byte pieces, at least a row)",
                self.row_stride, self.columns
            ));
        }
        if !(1..=MAX_BOX).contains(&self.box_rows)
            || self.box_columns == 0
            || self.box_columns * BF16 > SWIZZLE_BYTES
            || !(self.box_columns * BF16).is_multiple_of(GLOBAL_ALIGNMENT)
        {
            return Some(format!(
                "a box of {} x {} elements",
                self.box_rows, self.box_columns
            ));
        }
        None
    }
}

/// The session's descriptors.
#[derive(Default)]
pub struct TensorMaps {
    maps: HashMap<TensorMapKey, DeviceBuffer>,
}

impl TensorMaps {
    /// The device address of `key`'s descriptor, made now unless
    /// `capturing` (asked only when there is none yet) says the stream is
    /// being captured; 0 where there is none (see the module's comment).
    pub fn get(
        &mut self,
        key: TensorMapKey,
        capturing: impl FnOnce() -> Result<bool>,
    ) -> Result<u64> {
        if let Some(buffer) = self.maps.get(&key) {
            return Ok(buffer.ptr);
        }
        if let Some(problem) = key.problem() {
            tracing::debug!("no TMA descriptor: {problem}");
            return Ok(0);
        }
        if capturing()? {
            tracing::debug!("no TMA descriptor for {key:?}: first seen while capturing");
            return Ok(0);
        }
        let map = encode(&key)?;
        let buffer = DeviceBuffer::from_slice(&map.opaque)?;
        let address = buffer.ptr;
        self.maps.insert(key, buffer);
        Ok(address)
    }

    /// Descriptors made so far.
    pub fn len(&self) -> usize {
        self.maps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }
}

/// The driver's descriptor of `key` (checked by `TensorMapKey::problem`).
fn encode(key: &TensorMapKey) -> Result<sys::CUtensorMap> {
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    let dims = [key.columns, key.rows];
    let strides = [key.row_stride * BF16];
    let boxes = [key.box_columns as u32, key.box_rows as u32];
    let elements = [1u32, 1];
    // SAFETY: out-pointer to a local; the arrays have the rank's lengths
    // (the strides one fewer); the address is the caller's matrix, which
    // the driver only records.
    check(
        unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut map,
                sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                2,
                key.address as *mut std::ffi::c_void,
                dims.as_ptr(),
                strides.as_ptr(),
                boxes.as_ptr(),
                elements.as_ptr(),
                sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
                sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            )
        },
        "cuTensorMapEncodeTiled",
    )?;
    Ok(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> TensorMapKey {
        TensorMapKey {
            address: 0x7f00_0000_0000,
            rows: 4096,
            columns: 7168,
            row_stride: 7168,
            box_rows: 64,
            box_columns: 64,
        }
    }

    #[test]
    fn llama_weights_can_be_described() {
        assert_eq!(key().problem(), None);
        let down = TensorMapKey {
            rows: 14336,
            columns: 4096,
            row_stride: 4096,
            box_rows: 256,
            ..key()
        };
        assert_eq!(down.problem(), None);
    }

    #[test]
    fn what_a_descriptor_cannot_describe_gets_none() {
        let cases = [
            TensorMapKey {
                address: 0x7f00_0000_0002,
                ..key()
            },
            TensorMapKey {
                address: 0,
                ..key()
            },
            TensorMapKey {
                row_stride: 7100,
                ..key()
            },
            TensorMapKey {
                row_stride: 7164,
                columns: 7164,
                ..key()
            },
            TensorMapKey {
                box_rows: 257,
                ..key()
            },
            TensorMapKey {
                box_rows: 0,
                ..key()
            },
            TensorMapKey {
                box_columns: 72,
                ..key()
            },
            TensorMapKey {
                box_columns: 4,
                ..key()
            },
            TensorMapKey { rows: 0, ..key() },
        ];
        for case in cases {
            assert!(case.problem().is_some(), "{case:?}");
        }
    }

    #[test]
    fn refused_and_captured_matrices_get_no_descriptor() {
        // Neither reaches the driver: no GPU needed.
        let mut maps = TensorMaps::default();
        let odd = TensorMapKey {
            address: 0x7f00_0000_0002,
            ..key()
        };
        assert_eq!(maps.get(odd, || Ok(false)).ok(), Some(0));
        assert_eq!(maps.get(key(), || Ok(true)).ok(), Some(0));
        assert!(maps.is_empty());
    }
}
