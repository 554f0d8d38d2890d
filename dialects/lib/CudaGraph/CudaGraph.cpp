//===- CudaGraph.cpp - cudagraph dialect ----------------------------------===//

#include "symm/Dialect/CudaGraph/CudaGraph.h"

#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace symm::cudagraph;

#include "symm/Dialect/CudaGraph/CudaGraphDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "symm/Dialect/CudaGraph/CudaGraphAttrs.cpp.inc"

#define GET_OP_CLASSES
#include "symm/Dialect/CudaGraph/CudaGraphOps.cpp.inc"

void CudaGraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "symm/Dialect/CudaGraph/CudaGraphOps.cpp.inc"
      >();
  registerAttributes();
}

void CudaGraphDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "symm/Dialect/CudaGraph/CudaGraphAttrs.cpp.inc"
      >();
}

LogicalResult CudaGraphDialect::verifyOperationAttribute(Operation *op,
                                                         NamedAttribute attr) {
  StringRef name = attr.getName().getValue();
  auto function = dyn_cast<FunctionOpInterface>(op);
  if (name == kPartitionAttrName || name == kHoistedAttrName ||
      name == kCapturableAttrName) {
    if (!function)
      return op->emitError() << "'" << name << "' is only valid on functions";
  } else {
    return op->emitError() << "'" << name << "' is not a cudagraph attribute";
  }
  if (name == kCapturableAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError() << "'" << name << "' is a unit attribute";
    return success();
  }
  if (name == kPartitionAttrName) {
    auto index = dyn_cast<IntegerAttr>(attr.getValue());
    if (!index || index.getInt() < 0)
      return op->emitError()
             << "'" << name << "' must be a non-negative integer, got "
             << attr.getValue();
    return success();
  }
  auto hoisted = dyn_cast<DenseI64ArrayAttr>(attr.getValue());
  if (!hoisted)
    return op->emitError() << "'" << name
                           << "' must be an array<i64> of result indices";
  if (!op->hasAttr(kPartitionAttrName))
    return op->emitError() << "'" << name << "' is only valid on a partition";
  int64_t results = function.getResultTypes().size();
  for (int64_t index : hoisted.asArrayRef())
    if (index < 0 || index >= results)
      return op->emitError() << "'" << name << "' names result #" << index
                             << ", but the partition has " << results
                             << " results";
  return success();
}

LogicalResult LaunchOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto callee =
      tables.lookupNearestSymbolFrom<FunctionOpInterface>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << getCalleeAttr() << " does not name a function";
  if (!callee->hasAttr(CudaGraphDialect::kPartitionAttrName))
    return emitOpError() << getCalleeAttr()
                         << " is not a partition (it has no '"
                         << CudaGraphDialect::kPartitionAttrName
                         << "' attribute)";
  auto type = cast<FunctionType>(callee.getFunctionType());
  if (!llvm::equal(type.getInputs(), getInputs().getTypes()) ||
      !llvm::equal(type.getResults(), getOutputs().getTypes()))
    return emitOpError() << "types do not match the partition's signature "
                         << type;
  return success();
}
