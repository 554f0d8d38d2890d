//===- Linalg.cpp - linalg attributes without a C API ---------------------===//

#include "symm-c/Linalg.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

int32_t symmLinalgIteratorKind(MlirAttribute attr) {
  auto iterator = dyn_cast<linalg::IteratorTypeAttr>(unwrap(attr));
  if (!iterator)
    return -1;
  return iterator.getValue() == utils::IteratorType::reduction ? 1 : 0;
}
