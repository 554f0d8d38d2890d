//===- SymmMem.cpp - C API of the symm_mem dialect ------------------------===//

#include "symm-c/SymmMem.h"
#include "symm/Conversion/Passes.h"
#include "symm/Dialect/CudaGraph/CudaGraph.h"
#include "symm/Dialect/SymmMem/SymmMem.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Registration.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using namespace symm::symm_mem;

MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(SymmMem, symm_mem, SymmMemDialect)
MLIR_DEFINE_CAPI_DIALECT_REGISTRATION(CudaGraph, cudagraph,
                                      symm::cudagraph::CudaGraphDialect)

bool symmMemAttributeIsAAllocator(MlirAttribute attr) {
  return isa<AllocatorAttr>(unwrap(attr));
}

bool cudaGraphAttributeIsAHostMemory(MlirAttribute attr) {
  return isa<symm::cudagraph::HostMemoryAttr>(unwrap(attr));
}

MlirAttribute symmMemAllocatorAttrGet(MlirContext ctx, int32_t kind,
                                      MlirStringRef group) {
  std::optional<AllocatorKind> allocatorKind =
      symbolizeAllocatorKind(static_cast<uint32_t>(kind));
  if (!allocatorKind || group.length == 0)
    return MlirAttribute{nullptr};
  MLIRContext *context = unwrap(ctx);
  return wrap(AllocatorAttr::get(
      context, *allocatorKind, FlatSymbolRefAttr::get(context, unwrap(group))));
}

int32_t symmMemAllocatorAttrGetKind(MlirAttribute attr) {
  return static_cast<int32_t>(cast<AllocatorAttr>(unwrap(attr)).getKind());
}

MlirStringRef symmMemAllocatorAttrGetGroup(MlirAttribute attr) {
  return wrap(cast<AllocatorAttr>(unwrap(attr)).getGroup().getValue());
}

MlirAttribute symmMemTypeGetAllocator(MlirType type) {
  return wrap(Attribute(getAllocator(unwrap(type))));
}

MlirType symmMemPoolTypeGet(MlirContext ctx) {
  return wrap(PoolType::get(unwrap(ctx)));
}

bool symmMemTypeIsAPool(MlirType type) { return isa<PoolType>(unwrap(type)); }

bool symmMemStripAllocatorMemorySpaces(MlirOperation op) {
  return succeeded(symm::stripAllocatorMemorySpaces(unwrap(op)));
}

intptr_t symmMemGetSymmetricOperands(MlirOperation op, intptr_t *indices,
                                     intptr_t capacity) {
  auto iface = dyn_cast<SymmetricOperandOpInterface>(unwrap(op));
  if (!iface)
    return -1;
  SmallVector<OpOperand *> operands = iface.getSymmetricOperands();
  for (auto [i, operand] : llvm::enumerate(operands))
    if (static_cast<intptr_t>(i) < capacity)
      indices[i] = operand->getOperandNumber();
  return static_cast<intptr_t>(operands.size());
}

MlirStringRef symmMemGetCommGroup(MlirOperation op) {
  auto iface = dyn_cast<SymmetricOperandOpInterface>(unwrap(op));
  if (!iface)
    return MlirStringRef{nullptr, 0};
  return wrap(iface.getCommGroup().getValue());
}

bool symmMemOperationIsViewLike(MlirOperation op) {
  return isa<ViewLikeOpInterface>(unwrap(op));
}

void symmMemEmitRemark(MlirLocation loc, MlirStringRef message) {
  emitRemark(unwrap(loc)) << unwrap(message);
}

void symmMemEmitWarning(MlirLocation loc, MlirStringRef message) {
  emitWarning(unwrap(loc)) << unwrap(message);
}
