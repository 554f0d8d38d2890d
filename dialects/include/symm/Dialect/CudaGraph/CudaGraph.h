//===- CudaGraph.h - cudagraph dialect ----------------------------*- C++ -*-===//

#ifndef SYMM_DIALECT_CUDAGRAPH_CUDAGRAPH_H
#define SYMM_DIALECT_CUDAGRAPH_CUDAGRAPH_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"

#include "symm/Dialect/CudaGraph/CudaGraphDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "symm/Dialect/CudaGraph/CudaGraphAttrs.h.inc"

#define GET_OP_CLASSES
#include "symm/Dialect/CudaGraph/CudaGraphOps.h.inc"

#endif // SYMM_DIALECT_CUDAGRAPH_CUDAGRAPH_H
