//===- Passes.h - symm conversion passes ------------------------*- C++ -*-===//

#ifndef SYMM_CONVERSION_PASSES_H
#define SYMM_CONVERSION_PASSES_H

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace symm {
#define GEN_PASS_DECL
#include "symm/Conversion/Passes.h.inc"

/// Makes `converter` turn `!symm_mem.pool` into `!llvm.ptr`.
void addSymmMemTypeConversions(mlir::TypeConverter &converter);

/// Where the patterns load descriptor words once per function; it must
/// outlive the conversion that uses it.
class DescriptorWords;

/// The patterns that lower every symm_mem device op to llvm, nvvm and scf
/// ops; `converter` must convert `!symm_mem.pool` (see above). With
/// `words`, a descriptor that is a function argument has its words loaded
/// once, at the function's entry; without, at each use.
void populateSymmMemToNVVMConversionPatterns(
    const mlir::LLVMTypeConverter &converter, mlir::RewritePatternSet &patterns,
    DescriptorWords *words = nullptr);

/// Makes `converter` drop the `#symm_mem.allocator` memory space of memref
/// types (and keep every other type).
void addAllocatorSpaceStripping(mlir::TypeConverter &converter);

/// Comm buffers become plain device memory in `root` and below: every
/// memref in an allocator memory space loses it, by a conversion that
/// re-creates the ops and function signatures whose types change.
mlir::LogicalResult stripAllocatorMemorySpaces(mlir::Operation *root);

#define GEN_PASS_REGISTRATION
#include "symm/Conversion/Passes.h.inc"
} // namespace symm

#endif // SYMM_CONVERSION_PASSES_H
