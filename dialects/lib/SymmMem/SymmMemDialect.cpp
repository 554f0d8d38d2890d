//===- SymmMemDialect.cpp - symm_mem dialect and attributes ---------------===//
//
// The dialect hooks: attribute registration and verification, printer
// aliases, and the verifiers of the symm_mem.* discardable attributes that
// external functions carry (seed 004).
//
//===----------------------------------------------------------------------===//

#include "symm/Dialect/SymmMem/SymmMem.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace symm::symm_mem;

#include "symm/Dialect/SymmMem/SymmMemDialect.cpp.inc"
#include "symm/Dialect/SymmMem/SymmMemEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "symm/Dialect/SymmMem/SymmMemAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "symm/Dialect/SymmMem/SymmMemTypes.cpp.inc"

namespace {
/// Prints `#symm_tp` for `#symm_mem.allocator<symmetric, @tp>`, which keeps
/// memref types of comm buffers short in printed IR.
struct SymmMemOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  AliasResult getAlias(Attribute attr, raw_ostream &os) const override {
    auto allocator = dyn_cast<AllocatorAttr>(attr);
    if (!allocator)
      return AliasResult::NoAlias;
    os << "symm_";
    for (char c : allocator.getGroup().getValue())
      os << (llvm::isAlnum(c) ? c : '_');
    return AliasResult::OverridableAlias;
  }
};
} // namespace

void SymmMemDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "symm/Dialect/SymmMem/SymmMemOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "symm/Dialect/SymmMem/SymmMemTypes.cpp.inc"
      >();
  registerAttributes();
  registerInterfaces();
}

void SymmMemDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "symm/Dialect/SymmMem/SymmMemAttrs.cpp.inc"
      >();
}

void SymmMemDialect::registerInterfaces() {
  addInterfaces<SymmMemOpAsmInterface>();
}

LogicalResult
AllocatorAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                      AllocatorKind kind, FlatSymbolRefAttr group) {
  if (!group || group.getValue().empty())
    return emitError() << "#symm_mem.allocator needs a non-empty group name";
  return success();
}

AllocatorAttr symm::symm_mem::getAllocator(Type type) {
  auto memref = dyn_cast<BaseMemRefType>(type);
  if (!memref)
    return {};
  return dyn_cast_or_null<AllocatorAttr>(memref.getMemorySpace());
}

LogicalResult SymmMemDialect::verifyRegionArgAttribute(Operation *op,
                                                       unsigned regionIndex,
                                                       unsigned argIndex,
                                                       NamedAttribute attr) {
  if (attr.getName() != kSymmetricArgAttrName)
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' is not a symm_mem argument attribute; the "
                              "only one is '"
                           << kSymmetricArgAttrName << "'";
  if (!isa<AllocatorAttr>(attr.getValue()))
    return op->emitError()
           << "'" << kSymmetricArgAttrName
           << "' must be an #symm_mem.allocator attribute naming the "
              "allocator and group, got "
           << attr.getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (!function || regionIndex != 0)
    return op->emitError() << "'" << kSymmetricArgAttrName
                           << "' is only valid on function arguments";
  Type argType = function.getArgumentTypes()[argIndex];
  auto memref = dyn_cast<MemRefType>(argType);
  if (!memref)
    return op->emitError() << "'" << kSymmetricArgAttrName
                           << "' on argument #" << argIndex
                           << " requires a ranked memref argument, got "
                           << argType;
  // The caller passes symmetric memory behind the declared type, so that
  // type must be the default memory space or the allocator itself.
  if (memref.getMemorySpace() && memref.getMemorySpace() != attr.getValue())
    return op->emitError() << "'" << kSymmetricArgAttrName
                           << "' on argument #" << argIndex
                           << " requires the default memory space or "
                           << attr.getValue() << ", got " << argType;
  return success();
}

LogicalResult SymmMemDialect::verifyOperationAttribute(Operation *op,
                                                       NamedAttribute attr) {
  if (attr.getName() == kAllocatesSymmetricAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << kAllocatesSymmetricAttrName
                             << "' is a unit attribute, got "
                             << attr.getValue();
    if (!isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << kAllocatesSymmetricAttrName
                             << "' is only valid on functions";
    return success();
  }
  if (attr.getName() == kMaxTokensAttrName) {
    auto bound = dyn_cast<IntegerAttr>(attr.getValue());
    if (!bound || bound.getValue().getSExtValue() < 1)
      return op->emitError() << "'" << kMaxTokensAttrName
                             << "' is a positive integer (the largest token "
                                "count the function takes), got "
                             << attr.getValue();
    if (!isa<FunctionOpInterface>(op))
      return op->emitError() << "'" << kMaxTokensAttrName
                             << "' is only valid on functions";
    return success();
  }
  if (attr.getName() == kSymmetricArgAttrName)
    return op->emitError() << "'" << kSymmetricArgAttrName
                           << "' is an argument attribute; put it on a "
                              "function argument, not on the operation";
  return op->emitError() << "'" << attr.getName().getValue()
                         << "' is not a symm_mem attribute";
}
