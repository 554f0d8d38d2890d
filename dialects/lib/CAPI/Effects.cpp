//===- Effects.cpp - whether a buffer may be written ----------------------===//

#include "symm-c/Effects.h"

#include "mlir/CAPI/IR.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Operation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

/// Whether `user`, one of `value`'s users, may write through it.
static bool writes(Operation *user, Value value) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(user);
  if (!effects)
    // Nothing said: a call, or an op with regions whose own ops are users
    // themselves (scf.for, scf.if) and are looked at apart.
    return !user->hasTrait<OpTrait::HasRecursiveMemoryEffects>();
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &instance : instances) {
    if (!isa<MemoryEffects::Write>(instance.getEffect()))
      continue;
    // A write to no value in particular may be to this one.
    if (!instance.getValue() || instance.getValue() == value)
      return true;
  }
  return false;
}

bool symmValueMayBeWritten(MlirValue root) {
  SmallVector<Value> work{unwrap(root)};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      // A view of the buffer: what writes the view writes the buffer.
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          work.push_back(result);
        continue;
      }
      if (writes(user, value))
        return true;
    }
  }
  return false;
}

bool symmOpIsEffectFreeValue(MlirOperation raw) {
  Operation *op = unwrap(raw);
  return op->getNumRegions() == 0 && !isa<LLVM::InlineAsmOp>(op) &&
         isMemoryEffectFree(op);
}

bool symmOpIsL2Prefetch(MlirOperation raw) {
  auto prefetch = dyn_cast<NVVM::PrefetchOp>(unwrap(raw));
  return prefetch && prefetch.getCacheLevel() == NVVM::PrefetchCacheLevel::L2 &&
         !prefetch.getTensormap();
}

bool symmOpIsGridDependencyWait(MlirOperation raw) {
  auto control = dyn_cast<NVVM::GriddepcontrolOp>(unwrap(raw));
  return control && control.getKind() == NVVM::GridDepActionKind::wait;
}
