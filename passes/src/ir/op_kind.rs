//! Which of the ops the passes match on an op is, answered by the C++ op
//! classes (`symmOperationKind`, a TypeID test in `dialects/lib/CAPI/
//! OpKind.cpp`), so that passes compare kinds, not names. The values
//! mirror `enum SymmOpKind` in `symm-c/OpKind.h`; the unit test below
//! checks each against the op it names.

/// An op the passes recognize; `Other` for every other op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum OpKind {
    Other = 0,
    /// `memref.alloc`
    MemrefAlloc = 1,
    /// `memref.dealloc`
    MemrefDealloc = 2,
    /// `memref.copy`
    MemrefCopy = 3,
    /// `memref.dim`
    MemrefDim = 4,
    /// `memref.view`
    MemrefView = 5,
    /// `memref.memory_space_cast`
    MemrefMemorySpaceCast = 6,
    /// `func.func`
    Func = 7,
    /// `func.return`
    Return = 8,
    /// `func.call`
    Call = 9,
    /// `linalg.fill`
    LinalgFill = 10,
    /// `linalg.matmul`
    LinalgMatmul = 11,
    /// `linalg.batch_matmul`
    LinalgBatchMatmul = 12,
    /// `linalg.generic`
    LinalgGeneric = 13,
    /// `linalg.yield`
    LinalgYield = 14,
    /// `linalg.index`
    LinalgIndex = 15,
    /// `arith.constant`
    Constant = 16,
    /// `scf.for`
    ScfFor = 17,
    /// `scf.while`
    ScfWhile = 18,
    /// `gpu.module`
    GpuModule = 19,
    /// `gpu.launch`
    GpuLaunch = 20,
    /// `gpu.binary`
    GpuBinary = 21,
    /// `llvm.func`
    LlvmFunc = 22,
    /// `llvm.call`
    LlvmCall = 23,
    /// `cudagraph.launch`
    GraphLaunch = 24,
    /// `symm_mem.alloc`
    SymmAlloc = 25,
    /// `symm_mem.dealloc`
    SymmDealloc = 26,
    /// `symm_mem.group`
    Group = 27,
    /// `symm_mem.global`
    Global = 28,
    /// `symm_mem.all_reduce`
    AllReduce = 29,
    /// `symm_mem.all_reduce_out`
    AllReduceOut = 30,
    /// `symm_mem.all_reduce_epilogue_out`
    AllReduceEpilogueOut = 31,
    /// `symm_mem.all_reduce_rows_out`
    AllReduceRowsOut = 32,
    /// `symm_mem.all_gather_matmul`
    AllGatherMatmul = 33,
    /// `symm_mem.all_gather_matmul_out`
    AllGatherMatmulOut = 34,
    /// `memref.load`
    MemrefLoad = 35,
    /// `memref.store`
    MemrefStore = 36,
    /// `memref.atomic_rmw`
    MemrefAtomicRmw = 37,
    /// `memref.generic_atomic_rmw`
    MemrefGenericAtomicRmw = 38,
    /// `memref.alloca`
    MemrefAlloca = 39,
    /// `memref.get_global`
    MemrefGetGlobal = 40,
    /// `vector.load`
    VectorLoad = 41,
    /// `vector.store`
    VectorStore = 42,
    /// `vector.transfer_read`
    VectorTransferRead = 43,
    /// `vector.transfer_write`
    VectorTransferWrite = 44,
    /// `affine.load`
    AffineLoad = 45,
    /// `affine.store`
    AffineStore = 46,
    /// `scf.parallel`
    ScfParallel = 47,
    /// `symm_mem.get_global`
    SymmGetGlobal = 48,
    /// `symm_mem.rank`
    SymmRank = 49,
    /// `symm_mem.world_size`
    SymmWorldSize = 50,
    /// `symm_mem.pool_of`
    SymmPoolOf = 51,
    /// `symm_mem.with_allocator`
    WithAllocator = 52,
    /// `symm_mem.kernel_rounds`
    KernelRounds = 53,
    /// `symm_mem.kernel_variant`
    KernelVariant = 54,
    /// `symm_mem.kernel_variant_end`
    KernelVariantEnd = 55,
    /// `memref.subview`
    MemrefSubview = 56,
    /// `memref.cast`
    MemrefCast = 57,
    /// `memref.reinterpret_cast`
    MemrefReinterpretCast = 58,
    /// `memref.collapse_shape`
    MemrefCollapseShape = 59,
    /// `memref.expand_shape`
    MemrefExpandShape = 60,
    /// `memref.prefetch`
    MemrefPrefetch = 61,
    /// `memref.extract_strided_metadata`
    MemrefExtractStridedMetadata = 62,
    /// `memref.extract_aligned_pointer_as_index`
    MemrefExtractAlignedPointerAsIndex = 63,
    /// `affine.apply`
    AffineApply = 64,
    /// `symm_mem.tensor_map`
    TensorMap = 65,
    /// `arith.mulf`
    ArithMulf = 66,
    /// `arith.truncf`
    ArithTruncf = 67,
    /// `gpu.launch_func`
    GpuLaunchFunc = 68,
    /// `gpu.all_reduce`
    GpuAllReduce = 69,
    /// `gpu.func`
    GpuFunc = 70,
    /// `scf.if`
    ScfIf = 71,
}

impl OpKind {
    /// Every kind but `Other`, in code order.
    const ALL: [OpKind; 71] = [
        OpKind::MemrefAlloc,
        OpKind::MemrefDealloc,
        OpKind::MemrefCopy,
        OpKind::MemrefDim,
        OpKind::MemrefView,
        OpKind::MemrefMemorySpaceCast,
        OpKind::Func,
        OpKind::Return,
        OpKind::Call,
        OpKind::LinalgFill,
        OpKind::LinalgMatmul,
        OpKind::LinalgBatchMatmul,
        OpKind::LinalgGeneric,
        OpKind::LinalgYield,
        OpKind::LinalgIndex,
        OpKind::Constant,
        OpKind::ScfFor,
        OpKind::ScfWhile,
        OpKind::GpuModule,
        OpKind::GpuLaunch,
        OpKind::GpuBinary,
        OpKind::LlvmFunc,
        OpKind::LlvmCall,
        OpKind::GraphLaunch,
        OpKind::SymmAlloc,
        OpKind::SymmDealloc,
        OpKind::Group,
        OpKind::Global,
        OpKind::AllReduce,
        OpKind::AllReduceOut,
        OpKind::AllReduceEpilogueOut,
        OpKind::AllReduceRowsOut,
        OpKind::AllGatherMatmul,
        OpKind::AllGatherMatmulOut,
        OpKind::MemrefLoad,
        OpKind::MemrefStore,
        OpKind::MemrefAtomicRmw,
        OpKind::MemrefGenericAtomicRmw,
        OpKind::MemrefAlloca,
        OpKind::MemrefGetGlobal,
        OpKind::VectorLoad,
        OpKind::VectorStore,
        OpKind::VectorTransferRead,
        OpKind::VectorTransferWrite,
        OpKind::AffineLoad,
        OpKind::AffineStore,
        OpKind::ScfParallel,
        OpKind::SymmGetGlobal,
        OpKind::SymmRank,
        OpKind::SymmWorldSize,
        OpKind::SymmPoolOf,
        OpKind::WithAllocator,
        OpKind::KernelRounds,
        OpKind::KernelVariant,
        OpKind::KernelVariantEnd,
        OpKind::MemrefSubview,
        OpKind::MemrefCast,
        OpKind::MemrefReinterpretCast,
        OpKind::MemrefCollapseShape,
        OpKind::MemrefExpandShape,
        OpKind::MemrefPrefetch,
        OpKind::MemrefExtractStridedMetadata,
        OpKind::MemrefExtractAlignedPointerAsIndex,
        OpKind::AffineApply,
        OpKind::TensorMap,
        OpKind::ArithMulf,
        OpKind::ArithTruncf,
        OpKind::GpuLaunchFunc,
        OpKind::GpuAllReduce,
        OpKind::GpuFunc,
        OpKind::ScfIf,
    ];

    /// The kind of a live operation given by its C handle (for passes
    /// written on melior's references).
    pub fn of_raw(op: mlir_sys::MlirOperation) -> Self {
        // SAFETY: a kind test on an operation the caller holds alive.
        Self::from_code(unsafe { symm_dialects::ffi::symmOperationKind(op) })
    }

    fn from_code(code: i32) -> Self {
        usize::try_from(code)
            .ok()
            .and_then(|code| code.checked_sub(1))
            .and_then(|index| Self::ALL.get(index).copied())
            .unwrap_or(OpKind::Other)
    }
}

/// The dialects whose ops the passes treat as families (`Other` for every
/// other), answered by `symmOperationDialect` from the dialect classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpDialect {
    Other,
    Linalg,
    SymmMem,
    Arith,
    Index,
}

impl OpDialect {
    /// The family of a live operation given by its C handle (for passes
    /// written on melior's references).
    pub fn of_raw(op: mlir_sys::MlirOperation) -> Self {
        // SAFETY: a name query on an operation the caller holds alive.
        Self::from_code(unsafe { symm_dialects::ffi::symmOperationDialect(op) })
    }

    fn from_code(code: i32) -> Self {
        match code {
            1 => OpDialect::Linalg,
            2 => OpDialect::SymmMem,
            3 => OpDialect::Arith,
            4 => OpDialect::Index,
            _ => OpDialect::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::OpKind;
    use melior::ir::{
        Location,
        operation::{OperationBuilder, OperationLike},
    };

    /// The op each kind stands for, as its dialect names it.
    const NAMES: [(OpKind, &str); 71] = [
        (OpKind::MemrefAlloc, "memref.alloc"),
        (OpKind::MemrefDealloc, "memref.dealloc"),
        (OpKind::MemrefCopy, "memref.copy"),
        (OpKind::MemrefDim, "memref.dim"),
        (OpKind::MemrefView, "memref.view"),
        (OpKind::MemrefMemorySpaceCast, "memref.memory_space_cast"),
        (OpKind::Func, "func.func"),
        (OpKind::Return, "func.return"),
        (OpKind::Call, "func.call"),
        (OpKind::LinalgFill, "linalg.fill"),
        (OpKind::LinalgMatmul, "linalg.matmul"),
        (OpKind::LinalgBatchMatmul, "linalg.batch_matmul"),
        (OpKind::LinalgGeneric, "linalg.generic"),
        (OpKind::LinalgYield, "linalg.yield"),
        (OpKind::LinalgIndex, "linalg.index"),
        (OpKind::Constant, "arith.constant"),
        (OpKind::ScfFor, "scf.for"),
        (OpKind::ScfWhile, "scf.while"),
        (OpKind::GpuModule, "gpu.module"),
        (OpKind::GpuLaunch, "gpu.launch"),
        (OpKind::GpuLaunchFunc, "gpu.launch_func"),
        (OpKind::GpuBinary, "gpu.binary"),
        (OpKind::LlvmFunc, "llvm.func"),
        (OpKind::LlvmCall, "llvm.call"),
        (OpKind::GraphLaunch, "cudagraph.launch"),
        (OpKind::SymmAlloc, "symm_mem.alloc"),
        (OpKind::SymmDealloc, "symm_mem.dealloc"),
        (OpKind::Group, "symm_mem.group"),
        (OpKind::Global, "symm_mem.global"),
        (OpKind::AllReduce, "symm_mem.all_reduce"),
        (OpKind::AllReduceOut, "symm_mem.all_reduce_out"),
        (
            OpKind::AllReduceEpilogueOut,
            "symm_mem.all_reduce_epilogue_out",
        ),
        (OpKind::AllReduceRowsOut, "symm_mem.all_reduce_rows_out"),
        (OpKind::AllGatherMatmul, "symm_mem.all_gather_matmul"),
        (OpKind::AllGatherMatmulOut, "symm_mem.all_gather_matmul_out"),
        (OpKind::MemrefLoad, "memref.load"),
        (OpKind::MemrefStore, "memref.store"),
        (OpKind::MemrefAtomicRmw, "memref.atomic_rmw"),
        (OpKind::MemrefGenericAtomicRmw, "memref.generic_atomic_rmw"),
        (OpKind::MemrefAlloca, "memref.alloca"),
        (OpKind::MemrefGetGlobal, "memref.get_global"),
        (OpKind::VectorLoad, "vector.load"),
        (OpKind::VectorStore, "vector.store"),
        (OpKind::VectorTransferRead, "vector.transfer_read"),
        (OpKind::VectorTransferWrite, "vector.transfer_write"),
        (OpKind::AffineLoad, "affine.load"),
        (OpKind::AffineStore, "affine.store"),
        (OpKind::ScfParallel, "scf.parallel"),
        (OpKind::SymmGetGlobal, "symm_mem.get_global"),
        (OpKind::SymmRank, "symm_mem.rank"),
        (OpKind::SymmWorldSize, "symm_mem.world_size"),
        (OpKind::SymmPoolOf, "symm_mem.pool_of"),
        (OpKind::WithAllocator, "symm_mem.with_allocator"),
        (OpKind::KernelRounds, "symm_mem.kernel_rounds"),
        (OpKind::KernelVariant, "symm_mem.kernel_variant"),
        (OpKind::KernelVariantEnd, "symm_mem.kernel_variant_end"),
        (OpKind::MemrefSubview, "memref.subview"),
        (OpKind::MemrefCast, "memref.cast"),
        (OpKind::MemrefReinterpretCast, "memref.reinterpret_cast"),
        (OpKind::MemrefCollapseShape, "memref.collapse_shape"),
        (OpKind::MemrefExpandShape, "memref.expand_shape"),
        (OpKind::MemrefPrefetch, "memref.prefetch"),
        (
            OpKind::MemrefExtractStridedMetadata,
            "memref.extract_strided_metadata",
        ),
        (
            OpKind::MemrefExtractAlignedPointerAsIndex,
            "memref.extract_aligned_pointer_as_index",
        ),
        (OpKind::AffineApply, "affine.apply"),
        (OpKind::TensorMap, "symm_mem.tensor_map"),
        (OpKind::ArithMulf, "arith.mulf"),
        (OpKind::ArithTruncf, "arith.truncf"),
        (OpKind::GpuAllReduce, "gpu.all_reduce"),
        (OpKind::GpuFunc, "gpu.func"),
        (OpKind::ScfIf, "scf.if"),
    ];

    #[test]
    fn every_kind_is_the_op_it_names() {
        let context = symm_dialects::create_context();
        let location = Location::unknown(&context);
        for (kind, name) in NAMES {
            // An op of that name, not verified: the kind test reads its
            // registered class only.
            let op = OperationBuilder::new(name, location)
                .build()
                .unwrap_or_else(|error| panic!("{name}: {error}"));
            assert_eq!(OpKind::of_raw(op.to_raw()), kind, "{name}");
        }
        let other = OperationBuilder::new("arith.addi", location)
            .build()
            .expect("an op");
        assert_eq!(OpKind::of_raw(other.to_raw()), OpKind::Other);
        assert_eq!(
            super::OpDialect::of_raw(other.to_raw()),
            super::OpDialect::Arith
        );
        for (name, dialect) in [
            ("linalg.fill", super::OpDialect::Linalg),
            ("symm_mem.rank", super::OpDialect::SymmMem),
            ("index.add", super::OpDialect::Index),
            ("memref.alloc", super::OpDialect::Other),
        ] {
            let op = OperationBuilder::new(name, location)
                .build()
                .expect("an op");
            assert_eq!(super::OpDialect::of_raw(op.to_raw()), dialect, "{name}");
        }
    }
}
