//! Scalar types read structurally (an element type, a scalar argument),
//! so that no pass decides by a type's printed text.

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
    pub fn of_type(ty: melior::ir::Type) -> Option<Self> {
        use melior::ir::TypeLike;
        let raw = ty.to_raw();
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

#[cfg(test)]
mod tests {
    use super::Scalar;
    use melior::ir::Type;

    /// The scalar of the type written `text`, and it printed back.
    fn read(text: &str) -> Option<(Scalar, String)> {
        let context = symm_dialects::create_context();
        let ty = Type::parse(&context, text).unwrap_or_else(|| panic!("{text} parses"));
        Scalar::of_type(ty).map(|s| (s, s.to_string()))
    }

    #[test]
    fn reads_types_structurally_and_prints_them_as_mlir_does() {
        for text in [
            "f16",
            "bf16",
            "f32",
            "f64",
            "i1",
            "i8",
            "i32",
            "i64",
            "index",
            "!llvm.ptr",
        ] {
            let (_, printed) = read(text).unwrap_or_else(|| panic!("{text} is a scalar"));
            assert_eq!(printed, text);
        }
        assert_eq!(read("bf16").map(|(s, _)| s.bytes()), Some(Some(2)));
        assert_eq!(read("i1").map(|(s, _)| s.bytes()), Some(None));
        assert_eq!(read("i1").map(|(s, _)| s.key_bits()), Some(Some(1)));
        assert_eq!(read("index").map(|(s, _)| s.key_bits()), Some(Some(64)));
    }

    #[test]
    fn others_are_not_scalars() {
        for text in [
            "si32",
            "ui8",
            "f8E4M3FN",
            "complex<f32>",
            "vector<4xf32>",
            "memref<4xf32>",
            "!llvm.ptr<1>",
        ] {
            assert_eq!(read(text), None, "{text}");
        }
    }

    #[test]
    fn dtype_codes_round_trip() {
        use symm_protocol::abi::DtypeCode;
        for code in [DtypeCode::F32, DtypeCode::F16, DtypeCode::Bf16] {
            assert_eq!(Scalar::from(code).dtype(), Some(code));
            assert_eq!(Scalar::from(code).to_string(), code.text());
        }
    }
}
