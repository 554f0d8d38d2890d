/*===- symm-c/SymmMem.h - C API of the symm_mem dialect -----------*- C -*-===*\
|*                                                                            *|
|* What the Rust bindings need beyond what melior generates from ODS:        *|
|* dialect registration, the allocator attribute, the symmetric-operand      *|
|* interface, and remarks.                                                    *|
\*===----------------------------------------------------------------------===*/

#ifndef SYMM_C_SYMMMEM_H
#define SYMM_C_SYMMMEM_H

#include "mlir-c/IR.h"
#include "mlir-c/Support.h"

#ifdef __cplusplus
extern "C" {
#endif

MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(SymmMem, symm_mem);
MLIR_DECLARE_CAPI_DIALECT_REGISTRATION(CudaGraph, cudagraph);

/* AllocatorKind values; they match the ODS enum. */
enum { SYMM_MEM_ALLOCATOR_SYMMETRIC = 0 };

MLIR_CAPI_EXPORTED bool symmMemAttributeIsAAllocator(MlirAttribute attr);
/* Whether `attr` is `#cudagraph.host`, the memory space of host buffers. */
MLIR_CAPI_EXPORTED bool cudaGraphAttributeIsAHostMemory(MlirAttribute attr);
/* Returns a null attribute if `group` is empty or `kind` unknown. */
MLIR_CAPI_EXPORTED MlirAttribute symmMemAllocatorAttrGet(MlirContext ctx,
                                                         int32_t kind,
                                                         MlirStringRef group);
MLIR_CAPI_EXPORTED int32_t symmMemAllocatorAttrGetKind(MlirAttribute attr);
MLIR_CAPI_EXPORTED MlirStringRef
symmMemAllocatorAttrGetGroup(MlirAttribute attr);
/* The allocator of a comm-buffer memref type, or a null attribute. */
MLIR_CAPI_EXPORTED MlirAttribute symmMemTypeGetAllocator(MlirType type);

/* The `!symm_mem.pool` type, and whether `type` is one. */
MLIR_CAPI_EXPORTED MlirType symmMemPoolTypeGet(MlirContext ctx);
MLIR_CAPI_EXPORTED bool symmMemTypeIsAPool(MlirType type);

/* Writes the indices of the operands that `op` needs in symmetric memory
 * into `indices` (up to `capacity`) and returns how many there are, or -1
 * if `op` does not implement SymmetricOperandOpInterface. */
MLIR_CAPI_EXPORTED intptr_t symmMemGetSymmetricOperands(MlirOperation op,
                                                        intptr_t *indices,
                                                        intptr_t capacity);
/* The group of an op implementing SymmetricOperandOpInterface. */
MLIR_CAPI_EXPORTED MlirStringRef symmMemGetCommGroup(MlirOperation op);

/* True if `op` only creates a view of one of its operands (memref.view,
 * subview, casts, reshapes): it allocates no buffer of its own. */
MLIR_CAPI_EXPORTED bool symmMemOperationIsViewLike(MlirOperation op);

/* Drops the `#symm_mem.allocator` memory space from every memref type in
 * `op` and below (results, operands, block arguments, function
 * signatures) by a dialect conversion; false if it failed (diagnostics are
 * emitted). */
MLIR_CAPI_EXPORTED bool symmMemStripAllocatorMemorySpaces(MlirOperation op);

MLIR_CAPI_EXPORTED void symmMemEmitRemark(MlirLocation loc,
                                          MlirStringRef message);
MLIR_CAPI_EXPORTED void symmMemEmitWarning(MlirLocation loc,
                                           MlirStringRef message);

#ifdef __cplusplus
}
#endif

#endif /* SYMM_C_SYMMMEM_H */
