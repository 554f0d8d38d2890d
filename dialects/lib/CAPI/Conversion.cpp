//===- Conversion.cpp - dialect conversion driven from Rust ---------------===//
//
// symmApplyPartialConversion: a ConversionTarget whose legality and a
// pattern whose rewrite the caller supplies, run by MLIR's conversion
// driver.
//
//===----------------------------------------------------------------------===//

#include "symm-c/Conversion.h"

#include "mlir/CAPI/IR.h"
#include "mlir/CAPI/Rewrite.h"
#include "mlir/CAPI/Support.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

/// What the target and the pattern share.
struct SymmConversion {
  SymmConversionIllegal illegal;
  SymmConversionLower lower;
  void *user;
  /// Ops the caller refused: legal from then on, so that the driver does
  /// not report them again.
  llvm::DenseSet<Operation *> refused;
  /// Ops the rewrites erased, and the ops nested in them: out of the IR,
  /// alive until the conversion ends (the driver's list still holds them),
  /// and legal.
  llvm::DenseSet<Operation *> erased;
  std::vector<Operation *> toDestroy;
  /// The rewriter of the rewrite running now (null between rewrites).
  ConversionPatternRewriter *rewriter = nullptr;

  bool isIllegal(Operation *op) {
    return !refused.contains(op) && !erased.contains(op) &&
           illegal(wrap(op), user);
  }

  bool erase(Operation *op) {
    if (erased.contains(op))
      return true;
    if (!op->use_empty())
      return false;
    op->walk([&](Operation *nested) { erased.insert(nested); });
    op->dropAllReferences();
    op->remove();
    toDestroy.push_back(op);
    return true;
  }

  ~SymmConversion() {
    for (Operation *op : toDestroy)
      op->destroy();
  }
};

namespace {

using Callbacks = SymmConversion;

/// Any illegal op, rewritten by the caller.
struct CallbackPattern : ConversionPattern {
  CallbackPattern(MLIRContext *context, Callbacks &callbacks)
      : ConversionPattern(MatchAnyOpTypeTag(), /*benefit=*/1, context),
        callbacks(callbacks) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value>,
                  ConversionPatternRewriter &rewriter) const override {
    if (!callbacks.isIllegal(op))
      return failure();
    rewriter.setInsertionPoint(op);
    callbacks.rewriter = &rewriter;
    bool lowered = callbacks.lower(wrap(op), &callbacks, callbacks.user);
    callbacks.rewriter = nullptr;
    if (lowered)
      return success();
    callbacks.refused.insert(op);
    return failure();
  }

  Callbacks &callbacks;
};

} // namespace

MlirLogicalResult symmApplyPartialConversion(MlirOperation root,
                                             SymmConversionIllegal illegal,
                                             SymmConversionLower lower,
                                             void *user) {
  Operation *op = unwrap(root);
  MLIRContext *context = op->getContext();
  Callbacks callbacks{illegal, lower, user, {}, {}, {}};
  ConversionTarget target(*context);
  target.markUnknownOpDynamicallyLegal(
      [&](Operation *candidate) -> std::optional<bool> {
        return !callbacks.isIllegal(candidate);
      });
  RewritePatternSet patterns(context);
  patterns.add<CallbackPattern>(context, callbacks);
  ConversionConfig config;
  config.allowPatternRollback = false;
  config.foldingMode = DialectConversionFoldingMode::Never;
  return wrap(applyPartialConversion(op, target, std::move(patterns), config));
}

bool symmConversionEraseOp(SymmConversion *conversion, MlirOperation op) {
  return conversion->erase(unwrap(op));
}

void symmConversionUpdatedInPlace(SymmConversion *conversion,
                                  MlirOperation op) {
  if (conversion->rewriter)
    conversion->rewriter->modifyOpInPlace(unwrap(op), [] {});
}
