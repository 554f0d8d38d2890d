//===- SymmMemToNVVM.cpp - symm_mem device ops to NVVM and LLVM -----------===//
//
// Conversion patterns for the symm_mem device ops. A `!symm_mem.pool` is a
// pointer to the pool's descriptor (u64 words, `symm/Protocol.h`, generated
// from the runtime's `symm-protocol` crate); every op reads what it needs
// from there. Waits are `scf.while` loops that give up after the pool's
// timeout and set its error flag. The orderings NVVM has no op for are
// single inline-PTX instructions whose operands are bound to values.
//
//===----------------------------------------------------------------------===//

#include "symm/Conversion/Passes.h"
#include "symm/Dialect/SymmMem/SymmMem.h"
#include "symm/Protocol.h"

#include "mlir/Conversion/LLVMCommon/MemRefBuilder.h"
#include "mlir/Conversion/LLVMCommon/Pattern.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Func/Transforms/FuncConversions.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Transforms/DialectConversion.h"

namespace symm {
#define GEN_PASS_DEF_CONVERTSYMMMEMTONVVM
#include "symm/Conversion/Passes.h.inc"
} // namespace symm

using namespace mlir;
using namespace symm::symm_mem;

namespace {

Type ptrType(OpBuilder &b) { return LLVM::LLVMPointerType::get(b.getContext()); }

Value i64Constant(OpBuilder &b, Location loc, int64_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI64Type(), value);
}

Value i32Constant(OpBuilder &b, Location loc, int32_t value) {
  return LLVM::ConstantOp::create(b, loc, b.getI32Type(), value);
}

/// `base + bytes`, `bytes` an i64.
Value byteOffset(OpBuilder &b, Location loc, Value base, Value bytes) {
  return LLVM::GEPOp::create(b, loc, ptrType(b), b.getI8Type(), base,
                             ValueRange{bytes});
}

/// One PTX instruction with side effects; `result` null for none.
Value ptxInstruction(OpBuilder &b, Location loc, Type result, StringRef text,
                     StringRef constraints, ValueRange operands) {
  SmallVector<Type, 1> results;
  if (result)
    results.push_back(result);
  auto op = LLVM::InlineAsmOp::create(
      b, loc, results, operands, text, constraints, /*has_side_effects=*/true,
      /*is_align_stack=*/false, LLVM::tailcallkind::TailCallKind::None,
      LLVM::AsmDialectAttr(), ArrayAttr());
  return result ? op.getResult(0) : Value();
}

/// A u64 word that no kernel writes (descriptors and their tables), so
/// LLVM may hoist and merge its loads across the signal loops.
Value invariantLoad(OpBuilder &b, Location loc, Type type, Value at) {
  return LLVM::LoadOp::create(b, loc, type, at, /*alignment=*/8,
                              /*isVolatile=*/false, /*isNonTemporal=*/false,
                              /*isInvariant=*/true);
}

} // namespace

namespace symm {
/// Descriptor words loaded once per function: where a descriptor is an
/// argument of the function, its words load at the function's entry, in
/// parallel, the first time a device op needs them, and every later op
/// reuses them. Kept out of the signal loops and off the paths after a
/// block barrier, they cost no latency there (measured: loaded at each use,
/// a small all-reduce took 0.25-0.7 us longer on H200).
class DescriptorWords {
public:
  Value get(OpBuilder &b, Location loc, Value descriptor, int index,
            Type type) {
    auto argument = dyn_cast<BlockArgument>(descriptor);
    if (!argument || !argument.getOwner()->isEntryBlock())
      return load(b, loc, descriptor, index, type);
    auto key = std::make_pair(descriptor, index);
    if (Value known = words.lookup(key))
      return known;
    OpBuilder::InsertionGuard guard(b);
    Block *entry = argument.getOwner();
    if (Operation *previous = last.lookup(entry))
      b.setInsertionPointAfter(previous);
    else
      b.setInsertionPointToStart(entry);
    Value word = load(b, loc, descriptor, index, type);
    last[entry] = word.getDefiningOp();
    words[key] = word;
    return word;
  }

  static Value load(OpBuilder &b, Location loc, Value descriptor, int index,
                    Type type) {
    Value at = LLVM::GEPOp::create(b, loc, ptrType(b), b.getI64Type(),
                                   descriptor, ArrayRef<LLVM::GEPArg>{index});
    return invariantLoad(b, loc, type, at);
  }

private:
  llvm::DenseMap<std::pair<Value, int>, Value> words;
  llvm::DenseMap<Block *, Operation *> last;
};
} // namespace symm

namespace {
using symm::DescriptorWords;

/// What a kernel reads of a pool, through its descriptor pointer.
struct Pool {
  Value descriptor;
  /// Where words are loaded once per function; null: at each use.
  DescriptorWords *words = nullptr;

  Value word(OpBuilder &b, Location loc, int index, Type type) const {
    if (words)
      return words->get(b, loc, descriptor, index, type);
    return DescriptorWords::load(b, loc, descriptor, index, type);
  }
  Value i64Word(OpBuilder &b, Location loc, int index) const {
    return word(b, loc, index, b.getI64Type());
  }
  Value ptrWord(OpBuilder &b, Location loc, int index) const {
    return word(b, loc, index, ptrType(b));
  }
  Value rank(OpBuilder &b, Location loc) const {
    return i64Word(b, loc, SYMM_DESCRIPTOR_RANK);
  }
  Value world(OpBuilder &b, Location loc) const {
    return i64Word(b, loc, SYMM_DESCRIPTOR_WORLD);
  }

  /// Entry `index` of a device table of u64 addresses.
  static Value tableEntry(OpBuilder &b, Location loc, Value table,
                          Value index) {
    Value at = LLVM::GEPOp::create(b, loc, ptrType(b), b.getI64Type(), table,
                                   ValueRange{index});
    return invariantLoad(b, loc, ptrType(b), at);
  }
  /// Rank `rank`'s copy of the pool, mapped here.
  Value base(OpBuilder &b, Location loc, Value rank) const {
    return tableEntry(b, loc, ptrWord(b, loc, SYMM_DESCRIPTOR_BASES), rank);
  }
  /// The byte that `local` (in this rank's copy) addresses, in `peer`'s.
  Value peerAddress(OpBuilder &b, Location loc, Value local,
                    Value peer) const {
    Value own = base(b, loc, rank(b, loc));
    Value localInt = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), local);
    Value ownInt = LLVM::PtrToIntOp::create(b, loc, b.getI64Type(), own);
    Value offset = LLVM::SubOp::create(b, loc, localInt, ownInt);
    return byteOffset(b, loc, base(b, loc, peer), offset);
  }
  /// Unit `index` of an area of rank `peer`'s copy: the area starts at
  /// descriptor word `areaWord` (a byte offset from a base), its units are
  /// word `unitWord` bytes long (the staging slots, the Lamport regions).
  Value areaUnit(OpBuilder &b, Location loc, Value peer, int areaWord,
                 int unitWord, Value index) const {
    Value area = i64Word(b, loc, areaWord);
    Value unit = i64Word(b, loc, unitWord);
    Value skip = LLVM::MulOp::create(b, loc, index, unit);
    Value offset = LLVM::AddOp::create(b, loc, area, skip);
    return byteOffset(b, loc, base(b, loc, peer), offset);
  }
  /// The u32 of (channel, slotRank) in rank `padRank`'s signal pad: a CAS
  /// slot, or a counter when `counter`.
  Value padSlot(OpBuilder &b, Location loc, Value padRank, Value channel,
                Value slotRank, bool counter) const {
    Value pad =
        tableEntry(b, loc, ptrWord(b, loc, SYMM_DESCRIPTOR_PADS), padRank);
    if (counter)
      pad = byteOffset(b, loc, pad,
                       i64Constant(b, loc, SYMM_PROTOCOL_CAS_BYTES));
    Value row = LLVM::MulOp::create(
        b, loc, channel, i64Constant(b, loc, SYMM_PROTOCOL_MAX_WORLD));
    Value index = LLVM::AddOp::create(b, loc, row, slotRank);
    return LLVM::GEPOp::create(b, loc, ptrType(b), b.getI32Type(), pad,
                               ValueRange{index});
  }

  /// Repeats `attempt` (an i1: done) until it succeeds or the pool's
  /// timeout has passed; a timeout sets the pool's error flag. The clock is
  /// read only after an attempt that failed: the one that succeeds goes
  /// straight on.
  void spinUntil(OpBuilder &b, Location loc,
                 function_ref<Value(OpBuilder &, Location)> attempt) const {
    spinFor(b, loc, Type(), [&](OpBuilder &body, Location at) {
      return std::make_pair(attempt(body, at), Value());
    });
  }

  /// `spinUntil` for an attempt that also yields a value of `type` (null:
  /// none): the value of the last attempt.
  Value spinFor(OpBuilder &b, Location loc, Type type,
                function_ref<std::pair<Value, Value>(OpBuilder &, Location)>
                    attempt) const {
    Type i64 = b.getI64Type();
    Type i1 = b.getI1Type();
    Value timeout = i64Word(b, loc, SYMM_DESCRIPTOR_TIMEOUT);
    Value start = NVVM::GlobalTimerOp::create(b, loc, i64);
    SmallVector<Type> carried;
    SmallVector<Value> initial;
    if (type) {
      carried.push_back(type);
      initial.push_back(LLVM::PoisonOp::create(b, loc, type));
    }
    auto loop = scf::WhileOp::create(
        b, loc, carried, initial,
        [&](OpBuilder &body, Location at, ValueRange) {
          auto [done, value] = attempt(body, at);
          auto lateness = scf::IfOp::create(
              body, at, done,
              [&](OpBuilder &then, Location in) {
                Value no = LLVM::ConstantOp::create(then, in, i1, 0);
                scf::YieldOp::create(then, in, no);
              },
              [&](OpBuilder &otherwise, Location in) {
                Value now = NVVM::GlobalTimerOp::create(otherwise, in, i64);
                Value spent = LLVM::SubOp::create(otherwise, in, now, start);
                Value late = LLVM::ICmpOp::create(
                    otherwise, in, LLVM::ICmpPredicate::ugt, spent, timeout);
                scf::IfOp::create(
                    otherwise, in, late, [&](OpBuilder &then, Location in) {
                      Value flag = ptrWord(then, in, SYMM_DESCRIPTOR_ERROR);
                      LLVM::StoreOp::create(then, in,
                                            i32Constant(then, in, 1), flag);
                      scf::YieldOp::create(then, in);
                    });
                scf::YieldOp::create(otherwise, in, late);
              });
          Value late = lateness.getResult(0);
          Value stop = LLVM::OrOp::create(body, at, done, late);
          Value yes = LLVM::ConstantOp::create(body, at, body.getI1Type(), 1);
          Value more = LLVM::XOrOp::create(body, at, stop, yes);
          scf::ConditionOp::create(body, at, more,
                                   value ? ValueRange{value} : ValueRange{});
        },
        [](OpBuilder &body, Location at, ValueRange values) {
          scf::YieldOp::create(body, at, values);
        });
    return type ? loop.getResult(0) : Value();
  }

  /// Compare-and-swap of the u32 at `slot` from `from` to `to` with
  /// `order` ("release" or "acquire") at system scope, until it succeeds.
  void swapUntil(OpBuilder &b, Location loc, Value slot, StringRef order,
                 int32_t from, int32_t to) const {
    std::string text =
        ("atom." + order + ".sys.global.cas.b32 $0, [$1], $2, $3;").str();
    spinUntil(b, loc, [&](OpBuilder &body, Location at) -> Value {
      Value expected = i32Constant(body, at, from);
      Value old = ptxInstruction(body, at, body.getI32Type(), text,
                                 "=r,l,r,r,~{memory}",
                                 {slot, expected, i32Constant(body, at, to)});
      return LLVM::ICmpOp::create(body, at, LLVM::ICmpPredicate::eq, old,
                                  expected);
    });
  }

  /// Signals `peer` on `channel`: its slot (channel, me) from 0 to 1.
  void put(OpBuilder &b, Location loc, Value peer, Value channel) const {
    Value slot = padSlot(b, loc, peer, channel, rank(b, loc), false);
    swapUntil(b, loc, slot, "release", 0, 1);
  }
  /// Waits for `peer`'s signal on `channel`: my slot (channel, peer) 1 -> 0.
  void wait(OpBuilder &b, Location loc, Value peer, Value channel) const {
    Value slot = padSlot(b, loc, rank(b, loc), channel, peer, false);
    swapUntil(b, loc, slot, "acquire", 1, 0);
  }
};

/// The base of every device-op pattern: the pool operand, converted, and
/// the function-wide cache of its descriptor words.
template <typename OpT>
struct DevicePattern : ConvertOpToLLVMPattern<OpT> {
  using OpAdaptor = typename OpT::Adaptor;
  DevicePattern(const LLVMTypeConverter &converter, DescriptorWords *words)
      : ConvertOpToLLVMPattern<OpT>(converter), words(words) {}

  Pool pool(OpAdaptor adaptor) const {
    return Pool{adaptor.getPool(), words};
  }

  DescriptorWords *words;
};

struct PoolRankLowering : DevicePattern<PoolRankOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(PoolRankOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, pool(adaptor).rank(rewriter, op.getLoc()));
    return success();
  }
};

struct PoolWorldSizeLowering : DevicePattern<PoolWorldSizeOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(PoolWorldSizeOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, pool(adaptor).world(rewriter, op.getLoc()));
    return success();
  }
};

struct PeerPtrLowering : DevicePattern<PeerPtrOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(PeerPtrOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOp(op, pool(adaptor).peerAddress(rewriter, op.getLoc(),
                                                     adaptor.getLocal(),
                                                     adaptor.getPeer()));
    return success();
  }
};

struct PeerViewLowering : DevicePattern<PeerViewOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(PeerViewOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (!isa<LLVM::LLVMStructType>(adaptor.getBuffer().getType()))
      return rewriter.notifyMatchFailure(op, "memref has no LLVM descriptor");
    Pool pool = this->pool(adaptor);
    MemRefDescriptor view(adaptor.getBuffer());
    Value peer = adaptor.getPeer();
    view.setAllocatedPtr(
        rewriter, loc,
        pool.peerAddress(rewriter, loc, view.allocatedPtr(rewriter, loc), peer));
    view.setAlignedPtr(
        rewriter, loc,
        pool.peerAddress(rewriter, loc, view.alignedPtr(rewriter, loc), peer));
    rewriter.replaceOp(op, Value(view));
    return success();
  }
};

struct StagingSlotLowering : DevicePattern<StagingSlotOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(StagingSlotOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    rewriter.replaceOp(op, pool(adaptor).areaUnit(
                               rewriter, loc, adaptor.getPeer(),
                               SYMM_DESCRIPTOR_STAGING, SYMM_DESCRIPTOR_SLOT,
                               adaptor.getSlot()));
    return success();
  }
};

struct LamportRegionLowering : DevicePattern<LamportRegionOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(LamportRegionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Pool pool = this->pool(adaptor);
    // Region (slot, source) is the (slot * world + source)th.
    Value row = LLVM::MulOp::create(rewriter, loc, adaptor.getSlot(),
                                    pool.world(rewriter, loc));
    Value index = LLVM::AddOp::create(rewriter, loc, row, adaptor.getSource());
    rewriter.replaceOp(op, pool.areaUnit(rewriter, loc, adaptor.getPeer(),
                                         SYMM_DESCRIPTOR_LAMPORT,
                                         SYMM_DESCRIPTOR_LAMPORT_REGION, index));
    return success();
  }
};

struct LamportWaitLowering : DevicePattern<LamportWaitOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(LamportWaitOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Type type = op.getType();
    auto vector = dyn_cast<VectorType>(type);
    int64_t lanes = vector ? vector.getNumElements() : 1;
    Type i16 = rewriter.getI16Type();
    Type bits = vector ? Type(VectorType::get({lanes}, i16)) : i16;
    unsigned alignment = 2 * lanes;
    Value address = adaptor.getAddress();
    Value loaded = pool(adaptor).spinFor(
        rewriter, loc, type, [&](OpBuilder &b, Location at) {
          Value value = LLVM::LoadOp::create(b, at, type, address, alignment,
                                             /*isVolatile=*/true);
          Value raw = LLVM::BitcastOp::create(b, at, bits, value);
          Value sentinel = LLVM::ConstantOp::create(
              b, at, bits,
              vector ? Attribute(SplatElementsAttr::get(
                           cast<ShapedType>(bits),
                           b.getIntegerAttr(i16, SYMM_PROTOCOL_LAMPORT_SENTINEL)))
                     : Attribute(b.getIntegerAttr(
                           i16, SYMM_PROTOCOL_LAMPORT_SENTINEL)));
          Value waiting =
              LLVM::ICmpOp::create(b, at, LLVM::ICmpPredicate::eq, raw, sentinel);
          if (vector)
            waiting = LLVM::vector_reduce_or::create(b, at, b.getI1Type(),
                                                     waiting);
          Value yes = LLVM::ConstantOp::create(b, at, b.getI1Type(), 1);
          Value arrived = LLVM::XOrOp::create(b, at, waiting, yes);
          return std::make_pair(arrived, value);
        });
    rewriter.replaceOp(op, loaded);
    return success();
  }
};

struct PutSignalLowering : DevicePattern<PutSignalOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(PutSignalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    pool(adaptor).put(rewriter, op.getLoc(), adaptor.getPeer(),
                      adaptor.getChannel());
    rewriter.eraseOp(op);
    return success();
  }
};

struct WaitSignalLowering : DevicePattern<WaitSignalOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(WaitSignalOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    pool(adaptor).wait(rewriter, op.getLoc(), adaptor.getPeer(),
                       adaptor.getChannel());
    rewriter.eraseOp(op);
    return success();
  }
};

struct BarrierLowering : DevicePattern<BarrierOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(BarrierOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Pool pool = this->pool(adaptor);
    Value channel = adaptor.getChannel();
    NVVM::Barrier0Op::create(rewriter, loc);
    Value thread32 = NVVM::ThreadIdXOp::create(rewriter, loc, rewriter.getI32Type());
    Value thread = LLVM::ZExtOp::create(rewriter, loc, rewriter.getI64Type(), thread32);
    Value lane = LLVM::ICmpOp::create(rewriter, loc, LLVM::ICmpPredicate::ult,
                                      thread, pool.world(rewriter, loc));
    scf::IfOp::create(rewriter, loc, lane, [&](OpBuilder &b, Location at) {
      pool.put(b, at, thread, channel);
      pool.wait(b, at, thread, channel);
      scf::YieldOp::create(b, at);
    });
    NVVM::Barrier0Op::create(rewriter, loc);
    rewriter.eraseOp(op);
    return success();
  }
};

struct AddCounterLowering : DevicePattern<AddCounterOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(AddCounterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Pool pool = this->pool(adaptor);
    Value slot = pool.padSlot(rewriter, loc, adaptor.getPeer(),
                              adaptor.getChannel(), pool.rank(rewriter, loc),
                              /*counter=*/true);
    ptxInstruction(rewriter, loc, Type(),
                   "red.release.sys.global.add.u32 [$0], 1;", "l,~{memory}",
                   {slot});
    rewriter.eraseOp(op);
    return success();
  }
};

struct WaitCounterLowering : DevicePattern<WaitCounterOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(WaitCounterOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Pool pool = this->pool(adaptor);
    Value slot = pool.padSlot(rewriter, loc, pool.rank(rewriter, loc),
                              adaptor.getChannel(), adaptor.getPeer(),
                              /*counter=*/true);
    Value target = adaptor.getTarget();
    pool.spinUntil(rewriter, loc, [&](OpBuilder &b, Location at) -> Value {
      Value seen = ptxInstruction(b, at, b.getI32Type(),
                                  "ld.acquire.sys.global.u32 $0, [$1];",
                                  "=r,l,~{memory}", {slot});
      // Counters wrap: reached when seen - target >= 0 as a signed value.
      Value ahead = LLVM::SubOp::create(b, at, seen, target);
      return LLVM::ICmpOp::create(b, at, LLVM::ICmpPredicate::sge, ahead,
                                  i32Constant(b, at, 0));
    });
    rewriter.eraseOp(op);
    return success();
  }
};

/// This rank's call counter of `channel`.
Value epochSlot(OpBuilder &b, Location loc, const Pool &pool, Value channel) {
  Value epochs = pool.ptrWord(b, loc, SYMM_DESCRIPTOR_EPOCHS);
  return LLVM::GEPOp::create(b, loc, ptrType(b), b.getI32Type(), epochs,
                             ValueRange{channel});
}

struct EpochLowering : DevicePattern<EpochOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(EpochOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value at = epochSlot(rewriter, loc, pool(adaptor), adaptor.getChannel());
    rewriter.replaceOp(
        op, LLVM::LoadOp::create(rewriter, loc, rewriter.getI32Type(), at));
    return success();
  }
};

struct SetEpochLowering : DevicePattern<SetEpochOp> {
  using DevicePattern::DevicePattern;
  LogicalResult
  matchAndRewrite(SetEpochOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    Value at = epochSlot(rewriter, loc, pool(adaptor), adaptor.getChannel());
    LLVM::StoreOp::create(rewriter, loc, adaptor.getEpoch(), at);
    rewriter.eraseOp(op);
    return success();
  }
};

/// A kernel's pool arguments become descriptor pointers (workgroup and
/// private attributions keep their types).
struct KernelSignatureLowering : OpConversionPattern<gpu::GPUFuncOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::GPUFuncOp func, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const TypeConverter &converter = *getTypeConverter();
    Block &entry = func.getBody().front();
    FunctionType type = func.getFunctionType();
    TypeConverter::SignatureConversion conversion(entry.getNumArguments());
    SmallVector<Type> inputs;
    for (auto [index, argument] : llvm::enumerate(entry.getArguments())) {
      Type converted = converter.convertType(argument.getType());
      if (!converted)
        return rewriter.notifyMatchFailure(func, "argument type not converted");
      conversion.addInputs(index, converted);
      if (index < type.getNumInputs())
        inputs.push_back(converted);
    }
    rewriter.applySignatureConversion(&entry, conversion, &converter);
    rewriter.modifyOpInPlace(func, [&] {
      func.setFunctionType(
          FunctionType::get(func.getContext(), inputs, type.getResults()));
    });
    return success();
  }
};

/// A launch passes the descriptor pointer where it passed the pool.
struct LaunchOperandsLowering : OpConversionPattern<gpu::LaunchFuncOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(gpu::LaunchFuncOp launch, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.modifyOpInPlace(launch, [&] {
      launch.getKernelOperandsMutable().assign(adaptor.getKernelOperands());
    });
    return success();
  }
};

bool hasPool(TypeRange types) {
  return llvm::any_of(types, [](Type type) { return isa<PoolType>(type); });
}

/// What the patterns cannot lower, refused up front with the op's location:
/// a pool carried by an op other than the device ops, launches, calls,
/// returns and casts (it is an opaque handle, not a value to compute with),
/// and a peer view of a memref that has no strided layout.
LogicalResult checkConvertible(ModuleOp module) {
  WalkResult walk = module.walk<WalkOrder::PreOrder>([](Operation *op) {
    if (auto view = dyn_cast<PeerViewOp>(op)) {
      if (!view.getBuffer().getType().isStrided()) {
        view.emitOpError("needs a memref with a strided layout, got ")
            << view.getBuffer().getType();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    bool carries = hasPool(op->getOperandTypes()) ||
                   hasPool(op->getResultTypes()) ||
                   llvm::any_of(op->getRegions(), [](Region &region) {
                     return llvm::any_of(region.getBlocks(), [](Block &block) {
                       return hasPool(block.getArgumentTypes());
                     });
                   });
    if (!carries ||
        isa<SymmMemDialect>(op->getDialect()) ||
        isa<gpu::GPUFuncOp, gpu::LaunchFuncOp, func::FuncOp, func::CallOp,
            func::ReturnOp, UnrealizedConversionCastOp>(op))
      return WalkResult::advance();
    op->emitOpError("carries a !symm_mem.pool; only symm_mem device ops, "
                    "kernel and function arguments, calls and launches may: "
                    "use the pool itself where it is needed");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

struct ConvertSymmMemToNVVMPass
    : symm::impl::ConvertSymmMemToNVVMBase<ConvertSymmMemToNVVMPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkConvertible(module)))
      return signalPassFailure();
    MLIRContext *context = &getContext();

    // Signatures and launches: only pools change.
    TypeConverter signatures;
    signatures.addConversion([](Type type) { return type; });
    symm::addSymmMemTypeConversions(signatures);
    LLVMTypeConverter lowering(context);
    symm::addSymmMemTypeConversions(lowering);

    RewritePatternSet patterns(context);
    DescriptorWords words;
    symm::populateSymmMemToNVVMConversionPatterns(lowering, patterns, &words);
    patterns.add<KernelSignatureLowering, LaunchOperandsLowering>(signatures,
                                                                  context);
    populateFunctionOpInterfaceTypeConversionPattern<func::FuncOp>(patterns,
                                                                   signatures);
    populateCallOpTypeConversionPattern(patterns, signatures);
    populateReturnOpTypeConversionPattern(patterns, signatures);

    ConversionTarget target(*context);
    target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect,
                           scf::SCFDialect>();
    target.addIllegalOp<PoolRankOp, PoolWorldSizeOp, PeerPtrOp, PeerViewOp,
                        StagingSlotOp, LamportRegionOp, LamportWaitOp,
                        PutSignalOp, WaitSignalOp, BarrierOp,
                        AddCounterOp, WaitCounterOp, EpochOp, SetEpochOp>();
    target.addDynamicallyLegalOp<gpu::GPUFuncOp>([](gpu::GPUFuncOp func) {
      return !hasPool(func.getFunctionType().getInputs());
    });
    target.addDynamicallyLegalOp<func::FuncOp>([](func::FuncOp func) {
      return !hasPool(func.getFunctionType().getInputs()) &&
             !hasPool(func.getFunctionType().getResults());
    });
    target.addDynamicallyLegalOp<gpu::LaunchFuncOp>(
        [](gpu::LaunchFuncOp launch) {
          return !hasPool(launch.getKernelOperands().getTypes());
        });
    target.addDynamicallyLegalOp<func::CallOp, func::ReturnOp>(
        [](Operation *op) {
          return !hasPool(op->getOperandTypes()) &&
                 !hasPool(op->getResultTypes());
        });
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void symm::addSymmMemTypeConversions(TypeConverter &converter) {
  converter.addConversion([](PoolType pool) -> Type {
    return LLVM::LLVMPointerType::get(pool.getContext());
  });
}

void symm::populateSymmMemToNVVMConversionPatterns(
    const LLVMTypeConverter &converter, RewritePatternSet &patterns,
    DescriptorWords *words) {
  patterns.add<PoolRankLowering, PoolWorldSizeLowering, PeerPtrLowering,
               PeerViewLowering, StagingSlotLowering, LamportRegionLowering,
               LamportWaitLowering, PutSignalLowering,
               WaitSignalLowering, BarrierLowering, AddCounterLowering,
               WaitCounterLowering, EpochLowering, SetEpochLowering>(
      converter, words);
}
