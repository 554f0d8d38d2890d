//===- SymmMem.h - symm_mem dialect -------------------------------*- C++ -*-===//
//
// Everything a C++ user of the symm_mem dialect includes: the dialect, its
// enums, attributes, interfaces and operations.
//
//===----------------------------------------------------------------------===//

#ifndef SYMM_DIALECT_SYMMMEM_SYMMMEM_H
#define SYMM_DIALECT_SYMMMEM_SYMMMEM_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace symm::symm_mem {
/// The signal pads that collectives and signal ops share with peers.
struct SignalPadResource
    : public mlir::SideEffects::Resource::Base<SignalPadResource> {
  llvm::StringRef getName() final { return "SymmMemSignalPad"; }
};
} // namespace symm::symm_mem

#include "symm/Dialect/SymmMem/SymmMemDialect.h.inc"
#include "symm/Dialect/SymmMem/SymmMemEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "symm/Dialect/SymmMem/SymmMemAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "symm/Dialect/SymmMem/SymmMemTypes.h.inc"

#include "symm/Dialect/SymmMem/SymmMemInterfaces.h.inc"

#define GET_OP_CLASSES
#include "symm/Dialect/SymmMem/SymmMemOps.h.inc"

namespace symm::symm_mem {
/// The allocator of a comm buffer type, or null for any other type.
AllocatorAttr getAllocator(mlir::Type type);
} // namespace symm::symm_mem

#endif // SYMM_DIALECT_SYMMMEM_SYMMMEM_H
