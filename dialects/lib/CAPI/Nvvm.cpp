//===- Nvvm.cpp - NVVM attributes for the matmul kernels ------------------===//

#include "symm-c/Nvvm.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

using namespace mlir;

MlirAttribute symmNvvmMmaShapeGet(MlirContext ctx, int32_t m, int32_t n,
                                  int32_t k) {
  return wrap(Attribute(NVVM::MMAShapeAttr::get(unwrap(ctx), m, n, k)));
}

MlirAttribute symmNvvmMmaLayoutGet(MlirContext ctx, bool column) {
  return wrap(Attribute(NVVM::MMALayoutAttr::get(
      unwrap(ctx), column ? NVVM::MMALayout::col : NVVM::MMALayout::row)));
}

MlirAttribute symmNvvmMmaTypeBf16Get(MlirContext ctx) {
  return wrap(Attribute(
      NVVM::MMATypesAttr::get(unwrap(ctx), NVVM::MMATypes::bf16)));
}

MlirAttribute symmNvvmLdMatrixShape8x8Get(MlirContext ctx) {
  return wrap(Attribute(NVVM::LdStMatrixShapeAttr::get(unwrap(ctx), 8, 8)));
}

MlirAttribute symmNvvmLdMatrixB16Get(MlirContext ctx) {
  return wrap(Attribute(NVVM::LdStMatrixEltTypeAttr::get(
      unwrap(ctx), NVVM::LdStMatrixEltType::B16)));
}

MlirAttribute symmNvvmCacheGlobalGet(MlirContext ctx) {
  return wrap(Attribute(NVVM::LoadCacheModifierKindAttr::get(
      unwrap(ctx), NVVM::LoadCacheModifierKind::CG)));
}

MlirAttribute symmNvvmPrefetchL2Get(MlirContext ctx) {
  return wrap(Attribute(NVVM::PrefetchCacheLevelAttr::get(
      unwrap(ctx), NVVM::PrefetchCacheLevel::L2)));
}

MlirAttribute symmNvvmGridDepActionGet(MlirContext ctx, bool launchDependents) {
  return wrap(Attribute(NVVM::GridDepActionKindAttr::get(
      unwrap(ctx), launchDependents ? NVVM::GridDepActionKind::launch_dependents
                                    : NVVM::GridDepActionKind::wait)));
}

MlirAttribute symmNvvmWgmmaTypeGet(MlirContext ctx, bool f32) {
  return wrap(Attribute(NVVM::WGMMATypesAttr::get(
      unwrap(ctx), f32 ? NVVM::WGMMATypes::f32 : NVVM::WGMMATypes::bf16)));
}

MlirAttribute symmNvvmWgmmaScaleOutOneGet(MlirContext ctx) {
  return wrap(Attribute(
      NVVM::WGMMAScaleOutAttr::get(unwrap(ctx), NVVM::WGMMAScaleOut::one)));
}

MlirAttribute symmNvvmWgmmaScaleInOneGet(MlirContext ctx) {
  return wrap(Attribute(
      NVVM::WGMMAScaleInAttr::get(unwrap(ctx), NVVM::WGMMAScaleIn::one)));
}
