//===- Gpu.cpp - GPU dialect attributes without a C API -------------------===//

#include "symm-c/Gpu.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"

using namespace mlir;

MlirAttribute symmGpuAllReduceOperationAttrGet(MlirContext ctx,
                                               MlirStringRef name) {
  std::optional<gpu::AllReduceOperation> operation =
      gpu::symbolizeAllReduceOperation(unwrap(name));
  if (!operation)
    return MlirAttribute{nullptr};
  return wrap(Attribute(gpu::AllReduceOperationAttr::get(unwrap(ctx), *operation)));
}

MlirAttribute symmGpuDimensionAttrGet(MlirContext ctx, int32_t axis) {
  if (axis < 0 || axis > 2)
    return MlirAttribute{nullptr};
  return wrap(Attribute(gpu::DimensionAttr::get(
      unwrap(ctx), static_cast<gpu::Dimension>(axis))));
}

MlirAttribute symmGpuShuffleXorAttrGet(MlirContext ctx) {
  return wrap(Attribute(
      gpu::ShuffleModeAttr::get(unwrap(ctx), gpu::ShuffleMode::XOR)));
}
