/*===- symm-c/OpKind.h - the ops the passes recognize -------------*- C -*-===*\
|*                                                                            *|
|* Which of the ops the Rust passes match on an operation is, answered by   *|
|* the C++ op classes (a TypeID test), so that no pass compares op names.   *|
|* The Rust mirror is passes/src/ir/op_kind.rs; its unit test checks every  *|
|* value against this list.                                                  *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_OPKIND_H
#define SYMM_C_OPKIND_H

#include "mlir-c/IR.h"

#ifdef __cplusplus
extern "C" {
#endif

enum SymmOpKind {
  SYMM_OP_OTHER = 0,
  SYMM_OP_MEMREF_ALLOC = 1, /* memref.alloc */
  SYMM_OP_MEMREF_DEALLOC = 2, /* memref.dealloc */
  SYMM_OP_MEMREF_COPY = 3, /* memref.copy */
  SYMM_OP_MEMREF_DIM = 4, /* memref.dim */
  SYMM_OP_MEMREF_VIEW = 5, /* memref.view */
  SYMM_OP_MEMREF_MEMORY_SPACE_CAST = 6, /* memref.memory_space_cast */
  SYMM_OP_FUNC = 7, /* func.func */
  SYMM_OP_RETURN = 8, /* func.return */
  SYMM_OP_CALL = 9, /* func.call */
  SYMM_OP_LINALG_FILL = 10, /* linalg.fill */
  SYMM_OP_LINALG_MATMUL = 11, /* linalg.matmul */
  SYMM_OP_LINALG_BATCH_MATMUL = 12, /* linalg.batch_matmul */
  SYMM_OP_LINALG_GENERIC = 13, /* linalg.generic */
  SYMM_OP_LINALG_YIELD = 14, /* linalg.yield */
  SYMM_OP_LINALG_INDEX = 15, /* linalg.index */
  SYMM_OP_CONSTANT = 16, /* arith.constant */
  SYMM_OP_SCF_FOR = 17, /* scf.for */
  SYMM_OP_SCF_WHILE = 18, /* scf.while */
  SYMM_OP_GPU_MODULE = 19, /* gpu.module */
  SYMM_OP_GPU_LAUNCH = 20, /* gpu.launch */
  SYMM_OP_GPU_BINARY = 21, /* gpu.binary */
  SYMM_OP_LLVM_FUNC = 22, /* llvm.func */
  SYMM_OP_LLVM_CALL = 23, /* llvm.call */
  SYMM_OP_GRAPH_LAUNCH = 24, /* cudagraph.launch */
  SYMM_OP_SYMM_ALLOC = 25, /* symm_mem.alloc */
  SYMM_OP_SYMM_DEALLOC = 26, /* symm_mem.dealloc */
  SYMM_OP_GROUP = 27, /* symm_mem.group */
  SYMM_OP_GLOBAL = 28, /* symm_mem.global */
  SYMM_OP_ALL_REDUCE = 29, /* symm_mem.all_reduce */
  SYMM_OP_ALL_REDUCE_OUT = 30, /* symm_mem.all_reduce_out */
  SYMM_OP_ALL_REDUCE_EPILOGUE_OUT = 31, /* symm_mem.all_reduce_epilogue_out */
  SYMM_OP_ALL_REDUCE_ROWS_OUT = 32, /* symm_mem.all_reduce_rows_out */
  SYMM_OP_ALL_GATHER_MATMUL = 33, /* symm_mem.all_gather_matmul */
  SYMM_OP_ALL_GATHER_MATMUL_OUT = 34, /* symm_mem.all_gather_matmul_out */
  SYMM_OP_MEMREF_LOAD = 35, /* memref.load */
  SYMM_OP_MEMREF_STORE = 36, /* memref.store */
  SYMM_OP_MEMREF_ATOMIC_RMW = 37, /* memref.atomic_rmw */
  SYMM_OP_MEMREF_GENERIC_ATOMIC_RMW = 38, /* memref.generic_atomic_rmw */
  SYMM_OP_MEMREF_ALLOCA = 39, /* memref.alloca */
  SYMM_OP_MEMREF_GET_GLOBAL = 40, /* memref.get_global */
  SYMM_OP_VECTOR_LOAD = 41, /* vector.load */
  SYMM_OP_VECTOR_STORE = 42, /* vector.store */
  SYMM_OP_VECTOR_TRANSFER_READ = 43, /* vector.transfer_read */
  SYMM_OP_VECTOR_TRANSFER_WRITE = 44, /* vector.transfer_write */
  SYMM_OP_AFFINE_LOAD = 45, /* affine.load */
  SYMM_OP_AFFINE_STORE = 46, /* affine.store */
  SYMM_OP_SCF_PARALLEL = 47, /* scf.parallel */
  SYMM_OP_SYMM_GET_GLOBAL = 48, /* symm_mem.get_global */
  SYMM_OP_SYMM_RANK = 49, /* symm_mem.rank */
  SYMM_OP_SYMM_WORLD_SIZE = 50, /* symm_mem.world_size */
  SYMM_OP_SYMM_POOL_OF = 51, /* symm_mem.pool_of */
  SYMM_OP_WITH_ALLOCATOR = 52, /* symm_mem.with_allocator */
  SYMM_OP_KERNEL_ROUNDS = 53, /* symm_mem.kernel_rounds */
  SYMM_OP_KERNEL_VARIANT = 54, /* symm_mem.kernel_variant */
  SYMM_OP_KERNEL_VARIANT_END = 55, /* symm_mem.kernel_variant_end */
  SYMM_OP_MEMREF_SUBVIEW = 56, /* memref.subview */
  SYMM_OP_MEMREF_CAST = 57, /* memref.cast */
  SYMM_OP_MEMREF_REINTERPRET_CAST = 58, /* memref.reinterpret_cast */
  SYMM_OP_MEMREF_COLLAPSE_SHAPE = 59, /* memref.collapse_shape */
  SYMM_OP_MEMREF_EXPAND_SHAPE = 60, /* memref.expand_shape */
  SYMM_OP_MEMREF_PREFETCH = 61, /* memref.prefetch */
  SYMM_OP_MEMREF_EXTRACT_STRIDED_METADATA = 62, /* memref.extract_strided_metadata */
  SYMM_OP_MEMREF_EXTRACT_ALIGNED_POINTER_AS_INDEX = 63, /* memref.extract_aligned_pointer_as_index */
  SYMM_OP_AFFINE_APPLY = 64, /* affine.apply */
  SYMM_OP_TENSOR_MAP = 65, /* symm_mem.tensor_map */
  SYMM_OP_ARITH_MULF = 66, /* arith.mulf */
  SYMM_OP_ARITH_TRUNCF = 67, /* arith.truncf */
  SYMM_OP_GPU_LAUNCH_FUNC = 68, /* gpu.launch_func */
  SYMM_OP_GPU_ALL_REDUCE = 69, /* gpu.all_reduce */
  SYMM_OP_GPU_FUNC = 70, /* gpu.func */
  SYMM_OP_SCF_IF = 71, /* scf.if */
};

/* The SymmOpKind of `op` (SYMM_OP_OTHER for every other op). */
MLIR_CAPI_EXPORTED int32_t symmOperationKind(MlirOperation op);

/* Whether `op` is a loop (implements LoopLikeOpInterface: scf.for,
   scf.while, scf.parallel, affine.for, ...). */
MLIR_CAPI_EXPORTED bool symmOperationIsLoop(MlirOperation op);

/* The dialects whose ops the passes treat as families. */
enum SymmOpDialect {
  SYMM_DIALECT_OTHER = 0,
  SYMM_DIALECT_LINALG = 1,
  SYMM_DIALECT_SYMM_MEM = 2,
  SYMM_DIALECT_ARITH = 3,
  SYMM_DIALECT_INDEX = 4,
};

/* The SymmOpDialect of `op`, from its registered name's dialect namespace
   compared with the dialect classes' own (SYMM_DIALECT_OTHER for every
   other dialect). */
MLIR_CAPI_EXPORTED int32_t symmOperationDialect(MlirOperation op);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_OPKIND_H */
