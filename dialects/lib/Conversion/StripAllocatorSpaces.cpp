//===- StripAllocatorSpaces.cpp - comm buffers become plain memrefs -------===//
//
// The last step of convert-symm-mem-to-runtime: once pools are runtime
// allocations, a memref in an `#symm_mem.allocator` memory space is plain
// device memory, and one in `#cudagraph.host` a plain pointer the host
// reads and writes (pinned memory the application passed in). A type converter drops the memory space; a conversion
// re-creates every op whose operands, results or region arguments change
// type, and converts the signatures of functions (their argument and
// result types, block arguments included).
//
//===----------------------------------------------------------------------===//

#include "symm/Conversion/Passes.h"
#include "symm/Dialect/CudaGraph/CudaGraph.h"
#include "symm/Dialect/SymmMem/SymmMem.h"

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"

using namespace mlir;
using namespace symm::symm_mem;

namespace {

/// Any op whose types change: the same op over the converted operands,
/// with converted result types and regions whose block arguments are
/// converted.
struct ConvertOpTypes : ConversionPattern {
  ConvertOpTypes(const TypeConverter &converter, MLIRContext *context)
      : ConversionPattern(converter, MatchAnyOpTypeTag(), /*benefit=*/1,
                          context) {}

  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<FunctionOpInterface>(op))
      return failure();
    SmallVector<Type> results;
    if (failed(getTypeConverter()->convertTypes(op->getResultTypes(), results)))
      return rewriter.notifyMatchFailure(op, "a result type does not convert");
    OperationState state(op->getLoc(), op->getName(), operands, results,
                         op->getAttrs(), op->getSuccessors());
    for (Region &region : op->getRegions()) {
      Region *moved = state.addRegion();
      rewriter.inlineRegionBefore(region, *moved, moved->begin());
      if (failed(rewriter.convertRegionTypes(moved, *getTypeConverter())))
        return rewriter.notifyMatchFailure(op, "a block argument does not convert");
    }
    Operation *converted = rewriter.create(state);
    rewriter.replaceOp(op, converted->getResults());
    return success();
  }
};

} // namespace

/// Whether `space` is one that lowering drops: a comm buffer's allocator or
/// host memory.
static bool isStrippedSpace(Attribute space) {
  return isa_and_nonnull<AllocatorAttr, symm::cudagraph::HostMemoryAttr>(space);
}

void symm::addAllocatorSpaceStripping(TypeConverter &converter) {
  converter.addConversion([](Type type) { return type; });
  converter.addConversion([](MemRefType type) -> Type {
    if (!isStrippedSpace(type.getMemorySpace()))
      return type;
    return MemRefType::get(type.getShape(), type.getElementType(),
                           type.getLayout(), Attribute());
  });
  converter.addConversion([](UnrankedMemRefType type) -> Type {
    if (!isStrippedSpace(type.getMemorySpace()))
      return type;
    return UnrankedMemRefType::get(type.getElementType(), Attribute());
  });
}

LogicalResult symm::stripAllocatorMemorySpaces(Operation *root) {
  MLIRContext *context = root->getContext();
  TypeConverter converter;
  addAllocatorSpaceStripping(converter);
  ConversionTarget target(*context);
  target.markUnknownOpDynamicallyLegal([&](Operation *op) {
    // Any function op (func.func, gpu.func, llvm.func, whose function
    // types differ): its argument and result types and its body.
    if (auto function = dyn_cast<FunctionOpInterface>(op))
      return converter.isLegal(function.getArgumentTypes()) &&
             converter.isLegal(function.getResultTypes()) &&
             converter.isLegal(&function.getFunctionBody());
    if (!converter.isLegal(op))
      return false;
    return llvm::all_of(op->getRegions(), [&](Region &region) {
      return converter.isLegal(&region);
    });
  });
  RewritePatternSet patterns(context);
  patterns.add<ConvertOpTypes>(converter, context);
  populateAnyFunctionOpInterfaceTypeConversionPattern(patterns, converter);
  return applyPartialConversion(root, target, std::move(patterns));
}
