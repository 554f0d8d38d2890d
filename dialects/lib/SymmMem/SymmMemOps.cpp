//===- SymmMemOps.cpp - symm_mem operation verifiers ----------------------===//

#include "symm/Dialect/SymmMem/SymmMem.h"
#include "llvm/ADT/StringExtras.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace symm::symm_mem;

#include "symm/Dialect/SymmMem/SymmMemInterfaces.cpp.inc"

#define GET_OP_CLASSES
#include "symm/Dialect/SymmMem/SymmMemOps.cpp.inc"

//===----------------------------------------------------------------------===//
// Shared checks
//===----------------------------------------------------------------------===//

/// A memref shape as `4x?x8`, for diagnostics.
static std::string shapeOf(Value value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::interleave(
      cast<MemRefType>(value.getType()).getShape(), os,
      [&](int64_t dim) {
        if (ShapedType::isDynamic(dim))
          os << '?';
        else
          os << dim;
      },
      "x");
  return text;
}

/// A collective's memref operand is in the default memory space or is a comm
/// buffer of the op's own group. `symmetric` operands must end up in
/// symmetric memory, which symm-mem-realize provides when they are not yet.
static LogicalResult verifyOperandSpace(Operation *op, Value value,
                                        StringRef role,
                                        FlatSymbolRefAttr group,
                                        bool symmetric) {
  Attribute space = cast<MemRefType>(value.getType()).getMemorySpace();
  if (!space)
    return success();
  auto allocator = dyn_cast<AllocatorAttr>(space);
  if (!allocator && symmetric)
    return op->emitOpError()
           << role << " must be a comm buffer of group " << group
           << " or in the default memory space (symm-mem-realize places "
              "it), but its memory space is "
           << space;
  if (!allocator)
    return op->emitOpError()
           << role << " must be in the default memory space or a comm "
           << "buffer of group " << group << ", but its memory space is "
           << space;
  if (allocator.getGroup() != group)
    return op->emitOpError()
           << "group names disagree: the op runs in group " << group
           << " but its " << role << " is a comm buffer of group "
           << allocator.getGroup();
  return success();
}

/// Kernels address buffers as flat arrays.
static LogicalResult verifyContiguous(Operation *op, Value value,
                                      StringRef role) {
  auto type = cast<MemRefType>(value.getType());
  if (type.getLayout().isIdentity())
    return success();
  return op->emitOpError() << role
                           << " must have an identity layout (a contiguous "
                              "row-major buffer), got "
                           << type;
}

static LogicalResult verifySameElementType(Operation *op, Value lhs,
                                           StringRef lhsRole, Value rhs,
                                           StringRef rhsRole) {
  Type lhsType = getElementTypeOrSelf(lhs.getType());
  Type rhsType = getElementTypeOrSelf(rhs.getType());
  if (lhsType == rhsType)
    return success();
  return op->emitOpError() << "element types do not match: " << lhsRole
                           << " has " << lhsType << " but " << rhsRole
                           << " has " << rhsType;
}

/// Group names appear in `#symm_mem.allocator<kind, @name>` memory spaces
/// and in generated symbol names: letters, digits, '_', '$', '.' and '-'
/// (PyTorch names process groups "0", "1", ...), and not empty.
LogicalResult GroupOp::verify() {
  StringRef name = getSymName();
  bool plain = !name.empty() && llvm::all_of(name, [](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '$' || c == '.' || c == '-';
  });
  if (!plain)
    return emitOpError() << "group name \"" << name
                         << "\" must be letters, digits, '_', '$', '.' or '-', and "
                            "not empty";
  return success();
}

static GroupOp lookupGroup(Operation *op, FlatSymbolRefAttr group,
                           SymbolTableCollection &tables) {
  auto found = tables.lookupNearestSymbolFrom<GroupOp>(op, group);
  if (!found)
    op->emitOpError() << "refers to undeclared group " << group
                      << "; declare it with `symm_mem.group " << group
                      << "`";
  return found;
}

/// The group named by the memory space of a comm-buffer type must exist.
static LogicalResult verifyTypeGroup(Operation *op, Type type,
                                     SymbolTableCollection &tables) {
  AllocatorAttr allocator = getAllocator(type);
  if (!allocator)
    return success();
  return success(lookupGroup(op, allocator.getGroup(), tables) != nullptr);
}

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

LogicalResult RankOp::verifySymbolUses(SymbolTableCollection &tables) {
  return success(lookupGroup(*this, getGroupAttr(), tables) != nullptr);
}

LogicalResult WorldSizeOp::verifySymbolUses(SymbolTableCollection &tables) {
  return success(lookupGroup(*this, getGroupAttr(), tables) != nullptr);
}

//===----------------------------------------------------------------------===//
// Allocation
//===----------------------------------------------------------------------===//

LogicalResult GlobalOp::verify() {
  auto type = dyn_cast<MemRefType>(getType());
  if (!type || !getAllocator(type))
    return emitOpError() << "must have a comm-buffer type (a memref in an "
                            "#symm_mem.allocator memory space), got "
                         << getType();
  if (!type.hasStaticShape())
    return emitOpError() << "is allocated once, so its shape must be "
                            "static, got "
                         << type;
  if (!type.getLayout().isIdentity())
    return emitOpError() << "must have an identity layout, got " << type;
  if (std::optional<uint64_t> alignment = getAlignment();
      alignment && !llvm::isPowerOf2_64(*alignment))
    return emitOpError() << "alignment must be a power of two, got "
                         << *alignment;
  return success();
}

LogicalResult GlobalOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyTypeGroup(*this, getType(), tables);
}

LogicalResult GetGlobalOp::verifySymbolUses(SymbolTableCollection &tables) {
  auto global = tables.lookupNearestSymbolFrom<GlobalOp>(*this, getNameAttr());
  if (!global)
    return emitOpError() << getNameAttr()
                         << " does not name a symm_mem.global";
  if (global.getType() != getType())
    return emitOpError() << "result type " << getType()
                         << " does not match the type " << global.getType()
                         << " of global " << getNameAttr();
  return success();
}

LogicalResult AllocOp::verify() {
  MemRefType type = getType();
  if (static_cast<int64_t>(getDynamicSizes().size()) !=
      static_cast<int64_t>(type.getNumDynamicDims()))
    return emitOpError() << "has " << getDynamicSizes().size()
                         << " dynamic size operands but its type " << type
                         << " has " << type.getNumDynamicDims()
                         << " dynamic dimensions";
  if (!type.getLayout().isIdentity())
    return emitOpError() << "must have an identity layout, got " << type;
  return success();
}

LogicalResult AllocOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyTypeGroup(*this, getType(), tables);
}

LogicalResult WithAllocatorOp::verify() {
  Block &body = getBody().front();
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError() << "region must end with symm_mem.yield";
  if (yield.getValues().size() != getResults().size())
    return emitOpError() << "yields " << yield.getValues().size()
                         << " values but has " << getResults().size()
                         << " results";
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip(yield.getValues(), getResults()))) {
    auto [yielded, result] = pair;
    auto inner = cast<MemRefType>(yielded.getType());
    auto outer = cast<MemRefType>(result.getType());
    if (inner.getMemorySpace())
      return emitOpError() << "yielded value #" << index
                           << " must be in the default memory space, got "
                           << inner;
    if (outer.getMemorySpace() != getAllocator())
      return emitOpError() << "result #" << index
                           << " must be in the memory space " << getAllocator()
                           << ", got " << outer;
    if (inner.getShape() != outer.getShape() ||
        inner.getElementType() != outer.getElementType() ||
        inner.getLayout() != outer.getLayout())
      return emitOpError() << "result #" << index << " type " << outer
                           << " must match the yielded type " << inner
                           << " except for the memory space";
  }
  return success();
}

LogicalResult
WithAllocatorOp::verifySymbolUses(SymbolTableCollection &tables) {
  return success(lookupGroup(*this, getAllocator().getGroup(), tables) !=
                 nullptr);
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

/// A collective runs on the host, once per call of its function on every
/// rank, and every rank must reach it the same number of times: it may sit
/// in a function body and in sequential control flow, not in a parallel
/// loop (its iterations may run concurrently, or be distributed), a linalg
/// body (a per-element computation), GPU code or any other region whose
/// execution the compiler cannot order. Checked from the op outwards.
static LogicalResult verifyHostPlacement(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (isa<gpu::GPUFuncOp, gpu::LaunchOp, gpu::GPUModuleOp>(parent))
      return op->emitOpError()
             << "is a collective, which runs on the host: it cannot sit in GPU "
                "code ('"
             << parent->getName() << "')";
    if (isa<FunctionOpInterface>(parent))
      return success();
    if (isa<scf::ForOp, scf::WhileOp, scf::IfOp, scf::ExecuteRegionOp,
            scf::IndexSwitchOp, WithAllocatorOp>(parent))
      continue;
    return op->emitOpError()
           << "is a collective, which every rank runs once per call, in "
              "order: it may sit in a function body and in sequential control "
              "flow (scf.for, scf.while, scf.if, scf.execute_region, "
              "scf.index_switch), not inside '"
           << parent->getName() << "'";
  }
  return op->emitOpError() << "is a collective: it belongs in a function body";
}

/// The checks shared by every all-reduce form; `output` is the result of the
/// functional form or the `out` operand of the destination-passing form.
static LogicalResult verifyAllReduce(Operation *op, Value input, Value output,
                                     StringRef outputRole,
                                     FlatSymbolRefAttr group) {
  if (failed(verifyHostPlacement(op)) ||
      failed(verifyOperandSpace(op, input, "input", group, true)) ||
      failed(verifyOperandSpace(op, output, outputRole, group, false)) ||
      failed(verifyContiguous(op, input, "input")) ||
      failed(verifyContiguous(op, output, outputRole)) ||
      failed(verifySameElementType(op, input, "input", output, outputRole)))
    return failure();
  if (failed(verifyCompatibleShape(cast<MemRefType>(input.getType()),
                                   cast<MemRefType>(output.getType()))))
    return op->emitOpError()
           << "shapes do not match: input is " << shapeOf(input) << " but "
           << outputRole << " is " << shapeOf(output);
  auto inputType = cast<MemRefType>(input.getType());
  // The element and byte counts must fit in 64 bits (getNumElements wraps).
  if (inputType.hasStaticShape() && inputType.getElementType().isIntOrFloat()) {
    int64_t bytes = llvm::divideCeil(
        inputType.getElementType().getIntOrFloatBitWidth(), 8);
    for (int64_t size : inputType.getShape())
      if (llvm::MulOverflow(bytes, size, bytes))
        return op->emitOpError()
               << "reduces more bytes than 64 bits count (" << inputType
               << ")";
  }
  if (inputType.hasStaticShape() && inputType.getNumElements() == 0)
    return op->emitOpError()
           << "reduces no elements (" << inputType
           << "): there is nothing to exchange; remove the collective";
  return success();
}

#define SYMM_MEM_ALL_REDUCE_OP(OP)                                             \
  LogicalResult OP::verify() {                                                 \
    return verifyAllReduce(*this, getInput(), getResult(), "result",          \
                           getGroupAttr());                                    \
  }
#define SYMM_MEM_ALL_REDUCE_OUT_OP(OP)                                         \
  LogicalResult OP::verify() {                                                 \
    return verifyAllReduce(*this, getInput(), getOut(), "out",                \
                           getGroupAttr());                                    \
  }
SYMM_MEM_ALL_REDUCE_OP(AllReduceFnOp)
SYMM_MEM_ALL_REDUCE_OUT_OP(AllReduceOutFnOp)
#undef SYMM_MEM_ALL_REDUCE_OP
#undef SYMM_MEM_ALL_REDUCE_OUT_OP

/// Operands read at the output element's position (`role` #i): each has
/// `out`'s shape or is a row-broadcast vector, in the default memory space.
static LogicalResult verifyElementOperands(Operation *op, ValueRange operands,
                                           Value out, StringRef role) {
  auto outType = cast<MemRefType>(out.getType());
  for (auto [index, operand] : llvm::enumerate(operands)) {
    auto type = cast<MemRefType>(operand.getType());
    if (type.getMemorySpace() && !isa<AllocatorAttr>(type.getMemorySpace()))
      return op->emitOpError() << role << " #" << index
                               << " must be in the default memory space, got "
                               << type;
    if (failed(verifyContiguous(op, operand, role)))
      return failure();
    // A dynamic leading size (the token count) matches out's, which the
    // entry point checks once per call; other sizes are static.
    bool staticPastLeading =
        llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic);
    bool sameShape = type.getShape() == outType.getShape() && staticPastLeading;
    bool rowBroadcast = type.hasStaticShape() && type.getRank() == 1 &&
                        outType.getRank() >= 1 &&
                        type.getShape()[0] == outType.getShape().back();
    if (!sameShape && !rowBroadcast)
      return op->emitOpError()
             << role << " #" << index << " is " << shapeOf(operand)
             << ", but it must have out's shape (" << shapeOf(out)
             << ") or be 1-D with out's " << outType.getShape().back()
             << " columns";
  }
  return success();
}

/// A region that computes one scalar: its arguments have `argTypes`
/// (`argRoles` say what each is), it holds side-effect-free scalar ops
/// without regions, and it yields a `result`.
static LogicalResult verifyScalarRegion(Operation *op, Region &region,
                                        StringRef name, TypeRange argTypes,
                                        ArrayRef<std::string> argRoles,
                                        Type result, StringRef resultRole) {
  Block &body = region.front();
  if (body.getNumArguments() != argTypes.size()) {
    InFlightDiagnostic diag = op->emitOpError()
                              << name << " region takes "
                              << body.getNumArguments()
                              << " arguments, but needs " << argTypes.size()
                              << " (";
    llvm::interleaveComma(argRoles, diag);
    return diag << ")";
  }
  for (auto [index, expected] : llvm::enumerate(argTypes)) {
    Type argType = body.getArgument(index).getType();
    if (argType != expected)
      return op->emitOpError()
             << name << " argument #" << index << " is " << argType
             << ", but " << argRoles[index] << " is " << expected;
  }
  for (Operation &inner : body.without_terminator()) {
    if (!isMemoryEffectFree(&inner) || inner.getNumRegions() != 0)
      return inner.emitOpError()
             << "cannot run in an all-reduce epilogue: only side-effect-free "
                "scalar ops without regions may";
    for (Type type : inner.getResultTypes())
      if (isa<ShapedType>(type))
        return inner.emitOpError()
               << "cannot run in an all-reduce epilogue: it yields " << type
               << ", not a scalar";
  }
  auto yield = dyn_cast<EpilogueYieldOp>(body.getTerminator());
  if (!yield)
    return op->emitOpError() << name
                             << " region must end in symm_mem.epilogue_yield";
  if (yield.getValue().getType() != result)
    return yield.emitOpError() << "yields " << yield.getValue().getType()
                               << ", but " << resultRole << " holds " << result;
  return success();
}

/// Appends the element type of each of `operands` (`role` #i) to a
/// region's expected arguments.
static void appendElementArgs(ValueRange operands, StringRef role,
                              SmallVectorImpl<Type> &types,
                              SmallVectorImpl<std::string> &roles) {
  for (auto [index, operand] : llvm::enumerate(operands)) {
    types.push_back(getElementTypeOrSelf(operand));
    roles.push_back((role + " #" + llvm::Twine(index)).str());
  }
}

/// An epilogue region: (reduced element, epilogue operand elements...) to
/// out's element.
static LogicalResult verifyEpilogueRegion(Operation *op, Region &region,
                                          Value input, ValueRange operands,
                                          Value out) {
  SmallVector<Type> types{getElementTypeOrSelf(input)};
  SmallVector<std::string> roles{"the reduced element"};
  appendElementArgs(operands, "epilogue operand", types, roles);
  return verifyScalarRegion(op, region, "epilogue", types, roles,
                            getElementTypeOrSelf(out), "out");
}

/// A matmul prologue split over K: `input = lhs @ rhs`, with lhs `rows x
/// K`, rhs `K x columns` (static) of input's element type, and `partials`
/// `S x rows x columns` of f32 with a static S >= 2 that divides K, for
/// calls of at most `maxRows` rows. All of them or none.
static LogicalResult verifyMatmulPrologue(Operation *op, Value input,
                                          Value lhs, Value rhs,
                                          Value partials,
                                          std::optional<uint64_t> maxRows,
                                          FlatSymbolRefAttr group) {
  bool any = lhs || rhs || partials || maxRows;
  if (!any)
    return success();
  if (!lhs || !rhs || !partials || !maxRows)
    return op->emitOpError()
           << "a matmul prologue needs lhs, rhs, partials and "
              "split_k_max_rows together";
  auto inputType = cast<MemRefType>(input.getType());
  auto lhsType = cast<MemRefType>(lhs.getType());
  auto rhsType = cast<MemRefType>(rhs.getType());
  auto partialsType = cast<MemRefType>(partials.getType());
  if (failed(verifyOperandSpace(op, lhs, "lhs", group, false)) ||
      failed(verifyOperandSpace(op, rhs, "rhs", group, false)) ||
      failed(verifyOperandSpace(op, partials, "partials", group, false)) ||
      failed(verifyContiguous(op, lhs, "lhs")) ||
      failed(verifyContiguous(op, rhs, "rhs")) ||
      failed(verifyContiguous(op, partials, "partials")) ||
      failed(verifySameElementType(op, lhs, "lhs", input, "input")) ||
      failed(verifySameElementType(op, rhs, "rhs", input, "input")))
    return failure();
  if (inputType.getRank() != 2 || lhsType.getRank() != 2 ||
      rhsType.getRank() != 2 || !rhsType.hasStaticShape() ||
      ShapedType::isDynamic(inputType.getShape()[1]))
    return op->emitOpError()
           << "a matmul prologue multiplies 2-D matrices with a static rhs "
              "and a static column count, but input is "
           << shapeOf(input) << ", lhs " << shapeOf(lhs) << " and rhs "
           << shapeOf(rhs);
  int64_t rows = inputType.getShape()[0], columns = inputType.getShape()[1];
  int64_t k = rhsType.getShape()[0];
  int64_t lhsRows = lhsType.getShape()[0];
  if (lhsType.getShape()[1] != k || rhsType.getShape()[1] != columns ||
      (!ShapedType::isDynamic(lhsRows) && !ShapedType::isDynamic(rows) &&
       lhsRows != rows))
    return op->emitOpError()
           << "matmul shapes do not match: lhs " << shapeOf(lhs) << " @ rhs "
           << shapeOf(rhs) << " cannot give input " << shapeOf(input);
  ArrayRef<int64_t> slices = partialsType.getShape();
  if (slices.size() != 3 || ShapedType::isDynamic(slices[0]) ||
      slices[0] < 2 || k % slices[0] != 0 || slices[2] != columns)
    return op->emitOpError()
           << "partials must be S x rows x " << columns
           << " with a static S >= 2 that divides K = " << k << ", got "
           << shapeOf(partials);
  if (*maxRows < 1)
    return op->emitOpError() << "split_k_max_rows must be at least 1";
  return success();
}

/// The epilogue's operands are read at the output element's position, so
/// each has the output's shape or is a row-broadcast vector; its region is
/// a pure scalar function of (reduced element, operand elements...).
LogicalResult AllReduceEpilogueOutOp::verify() {
  if (failed(verifyAllReduce(*this, getInput(), getOut(), "out", getGroupAttr())) ||
      failed(verifyMatmulPrologue(*this, getInput(), getLhs(), getRhs(),
                                  getPartials(), getSplitKMaxRows(),
                                  getGroupAttr())) ||
      failed(verifyElementOperands(*this, getEpilogueOperands(), getOut(),
                                   "epilogue operand")))
    return failure();
  return verifyEpilogueRegion(*this, getBody(), getInput(),
                              getEpilogueOperands(), getOut());
}

/// As the epilogue op's (its matmul prologue included), for rows of
/// static length; `step` folds `arith.addf(x, acc)` in f32 (the block adds
/// the threads' partials, so nothing else may combine them), and `apply`
/// maps (element, row total, row operand elements...) to `rows_out`'s
/// element.
LogicalResult AllReduceRowsOutOp::verify() {
  if (failed(verifyAllReduce(*this, getInput(), getOut(), "out", getGroupAttr())) ||
      failed(verifyMatmulPrologue(*this, getInput(), getLhs(), getRhs(),
                                  getPartials(), getSplitKMaxRows(),
                                  getGroupAttr())) ||
      failed(verifyElementOperands(*this, getEpilogueOperands(), getOut(),
                                   "epilogue operand")) ||
      failed(verifyElementOperands(*this, getRowOperands(), getOut(),
                                   "row operand")))
    return failure();
  auto outType = cast<MemRefType>(getOut().getType());
  if (outType.getRank() != 2 || ShapedType::isDynamic(outType.getShape()[1]))
    return emitOpError() << "reduces rows of a 2-D memref with a static row "
                            "length, but out is "
                         << shapeOf(getOut());
  auto rowsType = cast<MemRefType>(getRowsOut().getType());
  if (rowsType.getShape() != outType.getShape())
    return emitOpError() << "rows_out is " << shapeOf(getRowsOut())
                         << ", but it must have out's shape ("
                         << shapeOf(getOut()) << ")";
  if (rowsType.getMemorySpace() &&
      !isa<AllocatorAttr>(rowsType.getMemorySpace()))
    return emitOpError() << "rows_out must be in the default memory space, got "
                         << rowsType;
  if (failed(verifyContiguous(*this, getRowsOut(), "rows_out")))
    return failure();
  Type element = getElementTypeOrSelf(getOut());
  Type f32 = Float32Type::get(getContext());
  if (failed(verifyEpilogueRegion(*this, getEpilogue(), getInput(),
                                  getEpilogueOperands(), getOut())))
    return failure();
  if (failed(verifyScalarRegion(*this, getStep(), "step", {element, f32},
                                {"out's element", "the f32 accumulator"}, f32,
                                "the accumulator")))
    return failure();
  Block &step = getStep().front();
  Value acc = step.getArgument(1);
  auto yield = cast<EpilogueYieldOp>(step.getTerminator());
  // By name: the dialect does not depend on arith for one check.
  Operation *add = yield.getValue().getDefiningOp();
  if (!add || add->getName().getStringRef() != "arith.addf" ||
      add->getNumOperands() != 2 || !acc.hasOneUse() ||
      (add->getOperand(0) != acc && add->getOperand(1) != acc))
    return emitOpError() << "step must yield arith.addf(x, acc) with acc, its "
                            "second argument, read only there: the threads' "
                            "partial sums are added";
  SmallVector<Type> types{element, f32};
  SmallVector<std::string> roles{"out's element", "the row total"};
  appendElementArgs(getRowOperands(), "row operand", types, roles);
  return verifyScalarRegion(*this, getApply(), "apply", types, roles,
                            getElementTypeOrSelf(getRowsOut()), "rows_out");
}

/// Shapes of all_gather_matmul: a is m x k, b is k x n, the result
/// (W*m) x n. Dynamic dimensions are checked at run time.
static LogicalResult verifyAllGatherMatmul(Operation *op, Value a, Value b,
                                           Value output, StringRef outputRole,
                                           FlatSymbolRefAttr group) {
  if (failed(verifyHostPlacement(op)))
    return failure();
  for (auto [value, role] : {std::pair<Value, StringRef>{a, "a"},
                             {b, "b"},
                             {output, outputRole}}) {
    auto type = cast<MemRefType>(value.getType());
    if (type.getRank() != 2)
      return op->emitOpError() << role << " must be a 2-D memref, got "
                               << type;
    if (failed(verifyContiguous(op, value, role)))
      return failure();
  }
  if (failed(verifyOperandSpace(op, a, "a", group, true)) ||
      failed(verifyOperandSpace(op, b, "b", group, false)) ||
      failed(verifyOperandSpace(op, output, outputRole, group, false)) ||
      failed(verifySameElementType(op, a, "a", b, "b")) ||
      failed(verifySameElementType(op, a, "a", output, outputRole)))
    return failure();

  ArrayRef<int64_t> aShape = cast<MemRefType>(a.getType()).getShape();
  ArrayRef<int64_t> bShape = cast<MemRefType>(b.getType()).getShape();
  ArrayRef<int64_t> cShape = cast<MemRefType>(output.getType()).getShape();
  auto known = [](int64_t lhs, int64_t rhs) {
    return !ShapedType::isDynamic(lhs) && !ShapedType::isDynamic(rhs);
  };
  if (known(aShape[1], bShape[0]) && aShape[1] != bShape[0])
    return op->emitOpError()
           << "shapes do not match: a is " << shapeOf(a) << " and b is "
           << shapeOf(b) << ", but a's columns must equal b's rows";
  if (known(bShape[1], cShape[1]) && bShape[1] != cShape[1])
    return op->emitOpError()
           << "shapes do not match: b is " << shapeOf(b) << " but "
           << outputRole << " is " << shapeOf(output)
           << "; both need the same number of columns";
  if (known(aShape[0], cShape[0]) &&
      (aShape[0] == 0 ? cShape[0] != 0 : cShape[0] % aShape[0] != 0))
    return op->emitOpError()
           << "shapes do not match: " << outputRole << " has " << cShape[0]
           << " rows, which is not a multiple of the " << aShape[0]
           << " rows of the shard a";
  return success();
}

/// With a declared world size, the gathered rows must add up exactly.
static LogicalResult verifyGatheredRows(Operation *op, Value a, Value output,
                                        StringRef outputRole,
                                        FlatSymbolRefAttr group,
                                        SymbolTableCollection &tables) {
  GroupOp groupOp = lookupGroup(op, group, tables);
  if (!groupOp)
    return failure();
  std::optional<uint64_t> worldSize = groupOp.getWorldSize();
  int64_t shardRows = cast<MemRefType>(a.getType()).getDimSize(0);
  int64_t rows = cast<MemRefType>(output.getType()).getDimSize(0);
  if (!worldSize || ShapedType::isDynamic(shardRows) ||
      ShapedType::isDynamic(rows))
    return success();
  if (rows != static_cast<int64_t>(*worldSize) * shardRows)
    return op->emitOpError()
           << "shapes do not match: " << outputRole << " has " << rows
           << " rows, but group " << group << " gathers " << *worldSize
           << " shards of " << shardRows << " rows";
  return success();
}

LogicalResult AllGatherMatmulOp::verify() {
  return verifyAllGatherMatmul(*this, getA(), getB(), getResult(), "result",
                               getGroupAttr());
}

LogicalResult AllGatherMatmulOutOp::verify() {
  return verifyAllGatherMatmul(*this, getA(), getB(), getOut(), "out",
                               getGroupAttr());
}

LogicalResult
AllGatherMatmulOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyGatheredRows(*this, getA(), getResult(), "result",
                            getGroupAttr(), tables);
}

LogicalResult
AllGatherMatmulOutOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyGatheredRows(*this, getA(), getOut(), "out", getGroupAttr(),
                            tables);
}

#define SYMM_MEM_GROUP_USER(OP)                                                \
  LogicalResult OP::verifySymbolUses(SymbolTableCollection &tables) {          \
    return success(lookupGroup(*this, getGroupAttr(), tables) != nullptr);     \
  }
SYMM_MEM_GROUP_USER(AllReduceFnOp)
SYMM_MEM_GROUP_USER(AllReduceOutFnOp)
SYMM_MEM_GROUP_USER(AllReduceEpilogueOutOp)
SYMM_MEM_GROUP_USER(AllReduceRowsOutOp)
#undef SYMM_MEM_GROUP_USER

#define SYMM_MEM_SYMMETRIC_OPERAND(OP, OPERAND)                                \
  SmallVector<OpOperand *> OP::getSymmetricOperands() {                       \
    return {&get##OPERAND##Mutable()};                                         \
  }
SYMM_MEM_SYMMETRIC_OPERAND(AllReduceFnOp, Input)
SYMM_MEM_SYMMETRIC_OPERAND(AllReduceOutFnOp, Input)
SYMM_MEM_SYMMETRIC_OPERAND(AllReduceEpilogueOutOp, Input)
SYMM_MEM_SYMMETRIC_OPERAND(AllReduceRowsOutOp, Input)
SYMM_MEM_SYMMETRIC_OPERAND(AllGatherMatmulOp, A)
SYMM_MEM_SYMMETRIC_OPERAND(AllGatherMatmulOutOp, A)
#undef SYMM_MEM_SYMMETRIC_OPERAND

//===----------------------------------------------------------------------===//
// Low-level ops
//===----------------------------------------------------------------------===//

/// True inside GPU code: a gpu.func, a gpu.launch body or a gpu.module.
static bool isInsideKernel(Operation *op) {
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp())
    if (isa<gpu::GPUFuncOp, gpu::LaunchOp, gpu::GPUModuleOp>(parent))
      return true;
  return false;
}

LogicalResult PoolOfOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyTypeGroup(*this, getBuffer().getType(), tables);
}

LogicalResult PoolOfOp::verify() {
  if (isInsideKernel(*this))
    return emitOpError("runs on the host: pass its result to the kernel as "
                       "a gpu.launch_func operand");
  return success();
}

/// Device ops run in GPU code only: a gpu.func, a gpu.launch body, or a
/// function of a gpu.module.
static LogicalResult verifyDeviceOp(Operation *op) {
  if (isInsideKernel(op))
    return success();
  return op->emitOpError(
      "is a device op: it belongs in GPU code (a gpu.func, a gpu.launch "
      "body or a function of a gpu.module)");
}

#define SYMM_MEM_DEVICE_OP(OP)                                                 \
  LogicalResult OP::verify() { return verifyDeviceOp(*this); }
SYMM_MEM_DEVICE_OP(PoolRankOp)
SYMM_MEM_DEVICE_OP(PoolWorldSizeOp)
SYMM_MEM_DEVICE_OP(PeerPtrOp)
SYMM_MEM_DEVICE_OP(PeerViewOp)
SYMM_MEM_DEVICE_OP(StagingSlotOp)
SYMM_MEM_DEVICE_OP(LamportRegionOp)
SYMM_MEM_DEVICE_OP(LamportWaitOp)
SYMM_MEM_DEVICE_OP(PutSignalOp)
SYMM_MEM_DEVICE_OP(WaitSignalOp)
SYMM_MEM_DEVICE_OP(BarrierOp)
SYMM_MEM_DEVICE_OP(AddCounterOp)
SYMM_MEM_DEVICE_OP(WaitCounterOp)
SYMM_MEM_DEVICE_OP(EpochOp)
SYMM_MEM_DEVICE_OP(SetEpochOp)
#undef SYMM_MEM_DEVICE_OP

//===----------------------------------------------------------------------===//
// TMA descriptors
//===----------------------------------------------------------------------===//

/// The descriptor's limits (CUDA's `cuTensorMapEncodeTiled` with the
/// 128-byte swizzle): a box of at most 256 rows whose row is whole 16-byte
/// pieces and at most 128 bytes, of a matrix (or stack of them) whose rows
/// are contiguous.
LogicalResult TensorMapOp::verify() {
  int64_t rows = getBoxRows(), columns = getBoxColumns();
  if (rows < 1 || rows > 256)
    return emitOpError() << "box of " << rows
                         << " rows: a TMA box has 1 to 256 rows";
  if (columns < 8 || columns > 64 || columns % 8 != 0)
    return emitOpError() << "box of " << columns
                         << " columns: with the 128-byte swizzle a box row is "
                            "8 to 64 bf16 elements, a multiple of 8";
  auto type = llvm::cast<MemRefType>(getSource().getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.back() != 1)
    return emitOpError() << "source " << type
                         << " must have contiguous rows (unit inner stride)";
  return success();
}
