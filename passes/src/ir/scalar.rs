//! Scalar types read structurally (an element type, a scalar argument),
//! so that no pass decides by a type's printed text.

use super::Ty;
use mlir_sys::{
    mlirIntegerTypeGetWidth, mlirIntegerTypeIsSignless, mlirLLVMPointerTypeGetAddressSpace,
    mlirTypeIsABF16, mlirTypeIsAF16, mlirTypeIsAF32, mlirTypeIsAF64, mlirTypeIsAIndex,
    mlirTypeIsAInteger, mlirTypeIsALLVMPointerType,
};
use std::fmt;

/// A scalar type the passes tell apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scalar {
    F16,
    Bf16,
    F32,
    F64,
    /// A signless integer of this many bits.
    Int(u32),
    Index,
    /// `!llvm.ptr` (address space 0).
    Ptr,
}

impl Scalar {
    /// The scalar `ty` is, if it is one of these.
    pub fn of(ty: Ty) -> Option<Self> {
        let raw = ty.raw();
        // SAFETY: queries on a live type.
        unsafe {
            if mlirTypeIsAF16(raw) {
                Some(Self::F16)
            } else if mlirTypeIsABF16(raw) {
                Some(Self::Bf16)
            } else if mlirTypeIsAF32(raw) {
                Some(Self::F32)
            } else if mlirTypeIsAF64(raw) {
                Some(Self::F64)
            } else if mlirTypeIsAInteger(raw) && mlirIntegerTypeIsSignless(raw) {
                Some(Self::Int(mlirIntegerTypeGetWidth(raw)))
            } else if mlirTypeIsAIndex(raw) {
                Some(Self::Index)
            } else if mlirTypeIsALLVMPointerType(raw)
                && mlirLLVMPointerTypeGetAddressSpace(raw) == 0
            {
                Some(Self::Ptr)
            } else {
                None
            }
        }
    }

    /// Bytes of an element of this type in a buffer the kernels read
    /// (floats and 8- to 64-bit integers).
    pub fn bytes(self) -> Option<u64> {
        match self {
            Self::F16 | Self::Bf16 | Self::Int(16) => Some(2),
            Self::F32 | Self::Int(32) => Some(4),
            Self::F64 | Self::Int(64) => Some(8),
            Self::Int(8) => Some(1),
            _ => None,
        }
    }

    /// Bits a graph's key word holds of it (index and pointers as 64).
    pub fn key_bits(self) -> Option<u32> {
        match self {
            Self::Index | Self::Ptr | Self::F64 => Some(64),
            Self::F16 | Self::Bf16 => Some(16),
            Self::F32 => Some(32),
            Self::Int(bits) => (1..=64).contains(&bits).then_some(bits),
        }
    }

    /// The runtime's dtype code (`symm_protocol::abi`), for the floats it
    /// takes.
    pub fn dtype(self) -> Option<symm_protocol::abi::DtypeCode> {
        use symm_protocol::abi::DtypeCode;
        match self {
            Self::F32 => Some(DtypeCode::F32),
            Self::F16 => Some(DtypeCode::F16),
            Self::Bf16 => Some(DtypeCode::Bf16),
            _ => None,
        }
    }
}

impl From<symm_protocol::abi::DtypeCode> for Scalar {
    fn from(code: symm_protocol::abi::DtypeCode) -> Self {
        use symm_protocol::abi::DtypeCode;
        match code {
            DtypeCode::F32 => Self::F32,
            DtypeCode::F16 => Self::F16,
            DtypeCode::Bf16 => Self::Bf16,
        }
    }
}

/// As MLIR spells the type (kernel names carry it).
impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::F16 => f.write_str("f16"),
            Self::Bf16 => f.write_str("bf16"),
            Self::F32 => f.write_str("f32"),
            Self::F64 => f.write_str("f64"),
            Self::Int(bits) => write!(f, "i{bits}"),
            Self::Index => f.write_str("index"),
            Self::Ptr => f.write_str("!llvm.ptr"),
        }
    }
}

impl Ty {
    /// The scalar this type is, if any.
    pub fn scalar(self) -> Option<Scalar> {
        Scalar::of(self)
    }
}
