//===- SymmMemOps.td - symm_mem operations -----------------*- tablegen -*-===//

#ifndef SYMM_DIALECT_SYMMMEM_OPS
#define SYMM_DIALECT_SYMMMEM_OPS

include "symm/Dialect/SymmMem/SymmMemBase.td"
include "symm/Dialect/SymmMem/SymmMemAttrs.td"
include "symm/Dialect/SymmMem/SymmMemTypes.td"
include "symm/Dialect/SymmMem/SymmMemInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/CommonTypeConstraints.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

/// Element types the collective kernels support; 16-bit types accumulate in
/// f32.
def SymmMem_CollectiveMemRef : MemRefOf<[F32, F16, BF16]>;

def SymmMem_IsCommBuffer : CPred<
  "::llvm::isa_and_nonnull<::symm::symm_mem::AllocatorAttr>("
  "::llvm::cast<::mlir::MemRefType>($_self).getMemorySpace())">;

/// A memref whose memory space is an `#symm_mem.allocator`.
def SymmMem_CommBuffer : Type<And<[AnyMemRef.predicate, SymmMem_IsCommBuffer]>,
    "memref in a #symm_mem.allocator memory space",
    "::mlir::MemRefType">;

/// A pointer of the LLVM dialect (`!llvm.ptr`), what device ops address
/// raw memory with.
def SymmMem_Pointer : Type<
    CPred<"::llvm::isa<::mlir::LLVM::LLVMPointerType>($_self)">,
    "LLVM pointer", "::mlir::LLVM::LLVMPointerType">,
  BuildableType<"::mlir::LLVM::LLVMPointerType::get($_builder.getContext())">;

//===----------------------------------------------------------------------===//
// Groups
//===----------------------------------------------------------------------===//

def SymmMem_GroupOp : SymmMem_Op<"group", [Symbol]> {
  let summary = "declares a communication group";
  let description = [{
    Declares the group `@sym_name`. Every group reference in collectives and
    in `#symm_mem.allocator` memory spaces names one of these. `world_size`
    is the number of ranks when it is known at compile time; without it the
    size is taken from the launcher at run time.

    ```mlir
    symm_mem.group @tp world_size(8)
    symm_mem.group @dp
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$world_size
  );
  let assemblyFormat = [{
    $sym_name (`world_size` `(` $world_size^ `)`)? attr-dict
  }];
  let hasVerifier = 1;
}

def SymmMem_RankOp : SymmMem_Op<"rank", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "this process's rank in a group";
  let description = [{
    ```mlir
    %r = symm_mem.rank @tp
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$group);
  let results = (outs Index:$rank);
  let assemblyFormat = "$group attr-dict";
}

def SymmMem_WorldSizeOp : SymmMem_Op<"world_size", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the number of ranks in a group";
  let description = [{
    ```mlir
    %w = symm_mem.world_size @tp
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$group);
  let results = (outs Index:$size);
  let assemblyFormat = "$group attr-dict";
}

//===----------------------------------------------------------------------===//
// Allocation
//===----------------------------------------------------------------------===//

def SymmMem_GlobalOp : SymmMem_Op<"global", [Symbol,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a persistent symmetric buffer, allocated once per process";
  let description = [{
    Declares a comm buffer that lives as long as the program: the runtime
    allocates it at module initialization on every rank of the allocator's
    group, and frees it at shutdown. Functions reach it with
    `symm_mem.get_global`. Planned pools and the persistent copies of graph
    inputs (realization path 2, seed 000) are globals.

    The type must have a static shape, an identity layout and an
    `#symm_mem.allocator` memory space. `alignment`, in bytes, is a power of
    two.

    ```mlir
    symm_mem.global @pool_tp alignment(128)
        : memref<192xi8, #symm_mem.allocator<symmetric, @tp>>
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeAttrOf<AnyMemRef>:$type,
    OptionalAttr<ConfinedAttr<I64Attr, [IntPositive]>>:$alignment
  );
  let assemblyFormat = [{
    $sym_name (`alignment` `(` $alignment^ `)`)? attr-dict `:` $type
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::MemRefType getMemRefType() {
      return ::llvm::cast<::mlir::MemRefType>(getType());
    }
  }];
}

def SymmMem_GetGlobalOp : SymmMem_Op<"get_global", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the address of a persistent symmetric buffer";
  let description = [{
    ```mlir
    %pool = symm_mem.get_global @pool_tp
        : memref<192xi8, #symm_mem.allocator<symmetric, @tp>>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs SymmMem_CommBuffer:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
}

def SymmMem_AllocOp : SymmMem_Op<"alloc", [
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "allocates a symmetric buffer for the current call";
  let description = [{
    Allocates a comm buffer of the memory space's group. It is collective:
    every rank of the group executes it with equal sizes. The operands give
    the dynamic dimensions in order. Used where a buffer cannot be planned
    into a persistent pool, such as a dynamically shaped buffer (realization
    path 3); release it with `symm_mem.dealloc`.

    ```mlir
    %b = symm_mem.alloc(%n) : memref<?x1024xbf16, #symm_mem.allocator<symmetric, @tp>>
    ```
  }];
  let arguments = (ins Variadic<Index>:$dynamicSizes);
  let results = (outs Res<SymmMem_CommBuffer, "",
                          [MemAlloc<DefaultResource>]>:$memref);
  let assemblyFormat = "`(` $dynamicSizes `)` attr-dict `:` type($memref)";
  let hasVerifier = 1;
}

def SymmMem_DeallocOp : SymmMem_Op<"dealloc"> {
  let summary = "releases a buffer from symm_mem.alloc";
  let description = [{
    Collective, like the allocation: every rank of the group releases it.

    ```mlir
    symm_mem.dealloc %b : memref<?x1024xbf16, #symm_mem.allocator<symmetric, @tp>>
    ```
  }];
  let arguments = (ins Arg<SymmMem_CommBuffer, "",
                           [MemFree<DefaultResource>]>:$memref);
  let assemblyFormat = "$memref attr-dict `:` type($memref)";
}

def SymmMem_WithAllocatorOp : SymmMem_Op<"with_allocator", [
    SingleBlock, RecursiveMemoryEffects,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs a region whose allocations come from a comm allocator";
  let description = [{
    The custom-op path of seed 004, the IR form of PyTorch's
    `with symmetric_memory():` context: every buffer that the ops in the
    region allocate for themselves (typically an external function that
    returns new buffers, declared with `symm_mem.allocates_symmetric`) is
    allocated by `allocator` instead of the default allocator. The yielded
    buffers come out typed in the allocator's memory space; inside the
    region they keep the types the callee declares.

    ```mlir
    %y = symm_mem.with_allocator #symm_mem.allocator<symmetric, @tp>
        -> memref<1024xf32, #symm_mem.allocator<symmetric, @tp>> {
      %0 = func.call @custom(%x) : (memref<1024xf32>) -> memref<1024xf32>
      symm_mem.yield %0 : memref<1024xf32>
    }
    ```
  }];
  let arguments = (ins SymmMem_AllocatorAttr:$allocator);
  let results = (outs Variadic<AnyMemRef>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $allocator (`->` type($results)^)? $body attr-dict
  }];
  let hasVerifier = 1;
}

def SymmMem_YieldOp : SymmMem_Op<"yield", [Pure, Terminator, ReturnLike,
    HasParent<"WithAllocatorOp">]> {
  let summary = "yields the buffers of a symm_mem.with_allocator region";
  let arguments = (ins Variadic<AnyMemRef>:$values);
  let assemblyFormat = "attr-dict ($values^ `:` type($values))?";
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

class SymmMem_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : SymmMem_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        DeclareOpInterfaceMethods<SymmMem_SymmetricOperandOpInterface>,
        MemoryEffects<[MemRead<SymmMem_SignalPadResource>,
                       MemWrite<SymmMem_SignalPadResource>]>])>;

defvar AllReduceCommonDoc = [{
    Every rank of `group` contributes `input`; each receives the element-wise
    `reduction` (sum, max or min) of all ranks' inputs, summed in rank order
    so that every rank gets bit-identical results. f16 and bf16 accumulate
    in f32.

    `input` must be a comm buffer of `group`, since peers read it directly;
    before `symm-mem-realize` it may still be in the default memory space.
    Input and output have the same shape and element type (f32, f16 or
    bf16) and an identity layout.
}];

defvar AllReduceAlgorithmDoc = [{
    `algorithm` says how the data moves: `auto` (the default, left out
    when printed) lets `symm-mem-select-all-reduce` choose from the byte
    size and world size (or the runtime, for a dynamic size); `one_shot`
    (each rank reads every peer's whole buffer) and `two_shot`
    (reduce-scatter of slices, then all-gather) fix it.
}];

/// The functional form: returns a new buffer holding the result.
def SymmMem_AllReduceFnOp : SymmMem_CollectiveOp<"all_reduce"> {
  let summary = "all-reduce into a new buffer";
  let description = AllReduceCommonDoc # AllReduceAlgorithmDoc # [{
    This functional form allocates its result; `symm-mem-to-dps` rewrites
    it into `all_reduce_out` so that memory planning sees the buffer.

    ```mlir
    %r = symm_mem.all_reduce sum %x group @tp
        : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<4x4xf32>
    %s = symm_mem.all_reduce sum %x group @tp algorithm two_shot
        : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>> -> memref<4x4xf32>
    ```
  }];
  let arguments = (ins
    SymmMem_ReductionKindAttr:$reduction,
    Arg<SymmMem_CollectiveMemRef, "", [MemRead]>:$input,
    FlatSymbolRefAttr:$group,
    DefaultValuedAttr<SymmMem_AllReduceAlgorithm,
                      "::symm::symm_mem::AllReduceAlgorithm::Auto">:$algorithm
  );
  let results = (outs Res<SymmMem_CollectiveMemRef, "",
                          [MemAlloc<DefaultResource>,
                           MemWrite<DefaultResource>]>:$result);
  let assemblyFormat = [{
    $reduction $input `group` $group (`algorithm` $algorithm^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

/// The destination-passing form: writes into `out`.
def SymmMem_AllReduceOutFnOp : SymmMem_CollectiveOp<"all_reduce_out"> {
  let summary = "all-reduce into a given buffer";
  let description = AllReduceCommonDoc # AllReduceAlgorithmDoc # [{
    The result is written to `out`, which may alias `input` (in-place
    all-reduce).

    ```mlir
    symm_mem.all_reduce_out sum %x into %y group @tp algorithm one_shot
        : memref<4x4xf32, #symm_mem.allocator<symmetric, @tp>>, memref<4x4xf32>
    ```
  }];
  let arguments = (ins
    SymmMem_ReductionKindAttr:$reduction,
    Arg<SymmMem_CollectiveMemRef, "", [MemRead]>:$input,
    Arg<SymmMem_CollectiveMemRef, "", [MemWrite]>:$out,
    FlatSymbolRefAttr:$group,
    DefaultValuedAttr<SymmMem_AllReduceAlgorithm,
                      "::symm::symm_mem::AllReduceAlgorithm::Auto">:$algorithm
  );
  let assemblyFormat = [{
    $reduction $input `into` $out `group` $group (`algorithm` $algorithm^)?
    attr-dict `:` type($input) `,` type($out)
  }];
  let hasVerifier = 1;
}

def SymmMem_AllReduceEpilogueOutOp
    : SymmMem_CollectiveOp<"all_reduce_epilogue_out",
                           [SingleBlock, AttrSizedOperandSegments]> {
  let summary = "all-reduce whose element-wise epilogue runs in the same kernel";
  let description = AllReduceCommonDoc # [{
    The all-reduce of `input` followed by an element-wise `epilogue`, written
    to `out` in one kernel: what `symm-mem-fuse-epilogue` makes of an
    all-reduce whose result is only read by an element-wise `linalg.generic`
    (bias add, residual add, activation). The reduced buffer is never
    written to memory.

    The region computes one output element. Its first argument is the
    reduced element (of `input`'s element type); then one argument per
    `epilogue` operand, holding that operand's element at the same position.
    An epilogue operand has `out`'s shape, or is 1-D with as many elements
    as `out` has columns, broadcast over rows (a bias). The region holds
    only side-effect-free scalar ops and ends in `symm_mem.epilogue_yield`.

    ```mlir
    symm_mem.all_reduce_epilogue_out sum %p epilogue(%bias : memref<64xf32>)
        into %y group @tp algorithm one_shot {
    ^bb0(%r: f32, %b: f32):
      %s = arith.addf %r, %b : f32
      symm_mem.epilogue_yield %s : f32
    } : memref<8x64xf32, #symm_mem.allocator<symmetric, @tp>>, memref<8x64xf32>
    ```

    **A matmul prologue, split over K** (what `symm-mem-split-k` makes of a
    `linalg.matmul` whose output only this op reads). With `matmul(%lhs,
    %rhs)`, the op first computes `input = lhs @ rhs` (f32 accumulation,
    rounded once to `input`'s element type) and then reduces it. For calls
    of at most `split_k_max_rows` rows it computes the product instead as
    S slices of K (`partials` is `S x rows x columns` of f32, S its static
    leading size): slice s is `lhs[:, s*K/S : (s+1)*K/S] @ rhs[s*K/S :
    (s+1)*K/S, :]` in f32, and the rank's contribution is the slices' sum
    in slice order, rounded once, as a split-K GEMM's reduction would give
    it; `input` is then not written. The sum happens where the all-reduce
    reads its own rank's data, so the split-K reduction costs no kernel of
    its own. `partials` needs room for `min(rows, split_k_max_rows)` rows.

    ```mlir
    symm_mem.all_reduce_epilogue_out sum %p
        matmul(%act, %w_down : memref<?x7168xbf16>, memref<7168x4096xbf16>)
        split_k(%q : memref<2x?x4096xf32>) up to 128 rows
        epilogue(%x : memref<?x4096xbf16>) into %out group @tp algorithm auto {
      ...
    } : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>, memref<?x4096xbf16>
    ```
  }];
  let arguments = (ins
    SymmMem_ReductionKindAttr:$reduction,
    Arg<SymmMem_CollectiveMemRef, "", [MemRead, MemWrite]>:$input,
    Arg<Optional<SymmMem_CollectiveMemRef>, "", [MemRead]>:$lhs,
    Arg<Optional<SymmMem_CollectiveMemRef>, "", [MemRead]>:$rhs,
    Arg<Optional<MemRefOf<[F32]>>, "", [MemRead, MemWrite]>:$partials,
    Arg<Variadic<AnyMemRef>, "", [MemRead]>:$epilogue_operands,
    Arg<SymmMem_CollectiveMemRef, "", [MemWrite]>:$out,
    FlatSymbolRefAttr:$group,
    DefaultValuedAttr<SymmMem_AllReduceAlgorithm,
                      "::symm::symm_mem::AllReduceAlgorithm::Auto">:$algorithm,
    OptionalAttr<I64Attr>:$split_k_max_rows
  );
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $reduction $input
    (`matmul` `(` $lhs^ `,` $rhs `:` type($lhs) `,` type($rhs) `)`
     `split_k` `(` $partials `:` type($partials) `)` `up` `to` $split_k_max_rows `rows`)?
    (`epilogue` `(` $epilogue_operands^ `:` type($epilogue_operands) `)`)?
    `into` $out `group` $group `algorithm` $algorithm $body attr-dict
    `:` type($input) `,` type($out)
  }];
  let hasVerifier = 1;
}

def SymmMem_AllReduceRowsOutOp
    : SymmMem_CollectiveOp<"all_reduce_rows_out", [AttrSizedOperandSegments]> {
  let summary = "all-reduce whose element-wise epilogue and row statistic (RMSNorm) run in the same kernel";
  let description = AllReduceCommonDoc # [{
    The all-reduce of the 2-D `input`, an element-wise `epilogue` written to
    `out`, and a row statistic of `out` applied to each row into `rows_out`,
    in one kernel: what `symm-mem-fuse-epilogue` makes of an all-reduce,
    a residual add, and RMSNorm's sum of squares and scaling (the fusion
    that vLLM and TensorRT-LLM write by hand). For each row:

    - `e = epilogue(reduced, epilogue operands...)` per element, stored in
      `out` (the residual stream);
    - `total = row_init + sum over the row of step(e, 0)`: `step` yields
      `arith.addf(x, acc)` where `acc` is its second argument, read only
      there, so each thread folds its elements in f32 and the block adds the
      partials;
    - `apply(e, total, row operands...)` per element, stored in `rows_out`.

    Operands of `epilogue` and of `apply` have `out`'s shape or are 1-D
    with as many elements as `out` has columns (broadcast over rows). The
    row length (columns) is static. Regions hold side-effect-free scalar
    ops and end in `symm_mem.epilogue_yield`.

    It takes the same optional matmul prologue as `all_reduce_epilogue_out`
    (`matmul(%lhs, %rhs : ...) split_k(%partials : ...) up to N rows`, after
    the input): `input = lhs @ rhs`, computed as f32 slices of K summed by
    the all-reduce for calls of at most N rows.

    ```mlir
    symm_mem.all_reduce_rows_out sum %p epilogue(%res_in : memref<?x4096xbf16>)
        into %res rows(%gamma : memref<4096xbf16>) into %normed init 0.0
        group @tp algorithm auto {
    ^bb0(%r: bf16, %x: bf16):       // the residual add
      ...
      symm_mem.epilogue_yield %h : bf16
    } step {
    ^bb0(%h: bf16, %acc: f32):      // the sum of squares
      ...
      symm_mem.epilogue_yield %s : f32
    } apply {
    ^bb0(%h: bf16, %total: f32, %g: bf16):  // h * rsqrt(total / 4096 + eps) * g
      ...
      symm_mem.epilogue_yield %y : bf16
    } : memref<?x4096xbf16, #symm_mem.allocator<symmetric, @tp>>,
        memref<?x4096xbf16>, memref<?x4096xbf16>
    ```
  }];
  let arguments = (ins
    SymmMem_ReductionKindAttr:$reduction,
    Arg<SymmMem_CollectiveMemRef, "", [MemRead, MemWrite]>:$input,
    Arg<Optional<SymmMem_CollectiveMemRef>, "", [MemRead]>:$lhs,
    Arg<Optional<SymmMem_CollectiveMemRef>, "", [MemRead]>:$rhs,
    Arg<Optional<MemRefOf<[F32]>>, "", [MemRead, MemWrite]>:$partials,
    Arg<Variadic<AnyMemRef>, "", [MemRead]>:$epilogue_operands,
    Arg<SymmMem_CollectiveMemRef, "", [MemWrite]>:$out,
    Arg<Variadic<AnyMemRef>, "", [MemRead]>:$row_operands,
    Arg<AnyMemRef, "", [MemWrite]>:$rows_out,
    F32Attr:$row_init,
    FlatSymbolRefAttr:$group,
    DefaultValuedAttr<SymmMem_AllReduceAlgorithm,
                      "::symm::symm_mem::AllReduceAlgorithm::Auto">:$algorithm,
    OptionalAttr<I64Attr>:$split_k_max_rows
  );
  let regions = (region SizedRegion<1>:$epilogue, SizedRegion<1>:$step,
                        SizedRegion<1>:$apply);
  let assemblyFormat = [{
    $reduction $input
    (`matmul` `(` $lhs^ `,` $rhs `:` type($lhs) `,` type($rhs) `)`
     `split_k` `(` $partials `:` type($partials) `)` `up` `to` $split_k_max_rows `rows`)?
    (`epilogue` `(` $epilogue_operands^ `:` type($epilogue_operands) `)`)?
    `into` $out `rows` (`(` $row_operands^ `:` type($row_operands) `)`)? `into` $rows_out
    `init` $row_init `group` $group `algorithm` $algorithm $epilogue `step` $step
    `apply` $apply attr-dict `:` type($input) `,` type($out) `,` type($rows_out)
  }];
  let hasVerifier = 1;
}

def SymmMem_EpilogueYieldOp : SymmMem_Op<"epilogue_yield", [Pure, Terminator,
    ReturnLike, ParentOneOf<["AllReduceEpilogueOutOp", "AllReduceRowsOutOp"]>]> {
  let summary = "yields the output element of an all-reduce epilogue";
  let arguments = (ins AnyType:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

defvar AllGatherMatmulDoc = [{
    Tensor-parallel column-wise matmul (seed 003): every rank holds a row
    shard `a` of shape `m x k` (a comm buffer of `group`, which peers read
    over NVLink) and the full `b` of shape `k x n`. The result is
    `all_gather(a) @ b`, of shape `(world_size * m) x n`, with rows ordered
    by rank. The lowering pipelines the gather as a P2P ring that overlaps
    each chunk's copy with the previous chunk's matmul.

    All three operands have the same element type (f32, f16 or bf16).
}];

def SymmMem_AllGatherMatmulOp : SymmMem_CollectiveOp<"all_gather_matmul"> {
  let summary = "all-gather of row shards fused with a matmul, new result";
  let description = AllGatherMatmulDoc # [{
    ```mlir
    %c = symm_mem.all_gather_matmul %a, %b group @tp
        : memref<64x128xbf16>, memref<128x256xbf16> -> memref<128x256xbf16>
    ```
  }];
  let arguments = (ins
    Arg<SymmMem_CollectiveMemRef, "", [MemRead]>:$a,
    Arg<SymmMem_CollectiveMemRef, "", [MemRead]>:$b,
    FlatSymbolRefAttr:$group
  );
  let results = (outs Res<SymmMem_CollectiveMemRef, "",
                          [MemAlloc<DefaultResource>,
                           MemWrite<DefaultResource>]>:$result);
  let assemblyFormat = [{
    $a `,` $b `group` $group attr-dict `:` type($a) `,` type($b) `->` type($result)
  }];
  let hasVerifier = 1;
}

def SymmMem_AllGatherMatmulOutOp
    : SymmMem_CollectiveOp<"all_gather_matmul_out"> {
  let summary = "all-gather of row shards fused with a matmul, into a buffer";
  let description = AllGatherMatmulDoc # [{
    ```mlir
    symm_mem.all_gather_matmul_out %a, %b into %c group @tp
        : memref<64x128xbf16>, memref<128x256xbf16>, memref<128x256xbf16>
    ```
  }];
  let arguments = (ins
    Arg<SymmMem_CollectiveMemRef, "", [MemRead]>:$a,
    Arg<SymmMem_CollectiveMemRef, "", [MemRead]>:$b,
    Arg<SymmMem_CollectiveMemRef, "", [MemWrite]>:$out,
    FlatSymbolRefAttr:$group
  );
  let assemblyFormat = [{
    $a `,` $b `into` $out `group` $group attr-dict `:` type($a) `,` type($b) `,` type($out)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Device ops: symmetric-memory kernels written in MLIR
//===----------------------------------------------------------------------===//

def SymmMem_PoolOfOp : SymmMem_Op<"pool_of", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "the kernel handle of the pool that holds a comm buffer";
  let description = [{
    Host side: the `!symm_mem.pool` of the symmetric pool that `buffer`
    lives in, to pass to a kernel with `gpu.launch_func`. The pool is the
    one `symm-mem-plan` put the buffer in (or the runtime's buffer itself).

    ```mlir
    %pool = symm_mem.pool_of %buf : memref<4096xbf16, #symm_mem.allocator<symmetric, @tp>>
    gpu.launch_func @kernels::@scatter blocks in (%c8, %c1, %c1)
        threads in (%c512, %c1, %c1) args(%pool : !symm_mem.pool, %n : index)
    ```
  }];
  let arguments = (ins SymmMem_CommBuffer:$buffer);
  let results = (outs SymmMem_PoolType:$pool);
  let assemblyFormat = "$buffer attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

/// Every device op: only inside GPU code, where a pool handle is an
/// argument of the kernel (checked by the shared verifier).
class SymmMem_DeviceOp<string mnemonic, list<Trait> traits = []>
    : SymmMem_Op<mnemonic, traits> {
  let hasVerifier = 1;
}

def SymmMem_PoolRankOp : SymmMem_DeviceOp<"pool_rank", [Pure]> {
  let summary = "this process's rank in the pool's group";
  let description = [{
    ```mlir
    %me = symm_mem.pool_rank %pool
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool);
  let results = (outs Index:$rank);
  let assemblyFormat = "$pool attr-dict";
}

def SymmMem_PoolWorldSizeOp : SymmMem_DeviceOp<"pool_world_size", [Pure]> {
  let summary = "the number of ranks of the pool's group";
  let description = [{
    ```mlir
    %world = symm_mem.pool_world_size %pool
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool);
  let results = (outs Index:$world_size);
  let assemblyFormat = "$pool attr-dict";
}

def SymmMem_PeerPtrOp : SymmMem_DeviceOp<"peer_ptr", [Pure]> {
  let summary = "a peer's address of a byte of the pool";
  let description = [{
    `local` points into this rank's copy of the pool; the result points at
    the same byte of rank `peer`'s copy, mapped into this process, so loads
    and stores through it go over NVLink. `peer` must be in
    `[0, world_size)`; this rank's own index gives back `local`.

    ```mlir
    %theirs = symm_mem.peer_ptr %pool[%peer], %mine : !llvm.ptr
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$peer, SymmMem_Pointer:$local);
  let results = (outs SymmMem_Pointer:$result);
  let assemblyFormat = [{
    $pool `[` $peer `]` `,` $local attr-dict `:` type($local)
  }];
}

def SymmMem_PeerViewOp : SymmMem_DeviceOp<"peer_view", [Pure,
    AllTypesMatch<["buffer", "result"]>]> {
  let summary = "a peer's copy of a buffer of the pool, as a memref";
  let description = [{
    `buffer` lies in this rank's copy of `pool`; the result is the same
    buffer in rank `peer`'s copy (same sizes and strides), mapped into this
    process, so `memref.load` and `memref.store` through it go over NVLink.

    ```mlir
    %theirs = symm_mem.peer_view %buf[%peer] in %pool : memref<?xbf16>
    ```
  }];
  let arguments = (ins AnyMemRef:$buffer, Index:$peer, SymmMem_PoolType:$pool);
  let results = (outs AnyMemRef:$result);
  let assemblyFormat = [{
    $buffer `[` $peer `]` `in` $pool attr-dict `:` type($buffer)
  }];
}

def SymmMem_StagingSlotOp : SymmMem_DeviceOp<"staging_slot", [Pure]> {
  let summary = "the address of a staging slot in a rank's copy of the pool";
  let description = [{
    Every pool keeps two staging slots (`slot` 0 or 1) after its data, the
    same bytes on every rank; the result is slot `slot` in rank `peer`'s
    copy. The staged one-shot copies its input into the slot its block's
    call counter picks (`symm_mem.epoch`), so that no closing barrier is
    needed.

    ```mlir
    %slot = symm_mem.staging_slot %pool[%peer] slot %parity
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$peer, Index:$slot);
  let results = (outs SymmMem_Pointer:$result);
  let assemblyFormat = "$pool `[` $peer `]` `slot` $slot attr-dict";
}

def SymmMem_LamportRegionOp : SymmMem_DeviceOp<"lamport_region", [Pure]> {
  let summary = "the address of a region of a rank's Lamport area";
  let description = [{
    Every pool keeps a Lamport area after its staging slots, the same bytes
    on every rank: two parities (`slot` 0 or 1, picked by the block's call
    counter) of one region per source rank. The result is region
    `(slot, source)` in rank `peer`'s copy. The Lamport one-shot stores its
    input into region `(slot, this rank)` of every peer and reads the
    regions of its own copy with `symm_mem.lamport_wait`. Every lane of an
    area holds the sentinel -0.0 (u16 0x8000) until data arrives, and again
    after it is read.

    ```mlir
    %region = symm_mem.lamport_region %pool[%peer] slot %parity from %me
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$peer, Index:$slot,
                       Index:$source);
  let results = (outs SymmMem_Pointer:$result);
  let assemblyFormat = "$pool `[` $peer `]` `slot` $slot `from` $source attr-dict";
}

def SymmMem_LamportWaitOp : SymmMem_DeviceOp<"lamport_wait", [
    MemoryEffects<[MemRead, MemRead<SymmMem_SignalPadResource>,
                   MemWrite<SymmMem_SignalPadResource>]>]> {
  let summary = "loads a vector of a Lamport region once every lane arrived";
  let description = [{
    Loads the 16-bit floats at `address` (volatile: from memory, not a
    cache) until no lane holds the sentinel -0.0 (u16 0x8000), and gives
    them back. Senders write +0.0 for -0.0, so a sentinel lane is one whose
    data has not arrived. Gives up once the pool's timeout has passed and
    sets the pool's error flag, which the runtime reports when the call
    returns: a dead peer or a peer that sent fewer elements is an error,
    never a hang.

    ```mlir
    %v = symm_mem.lamport_wait %pool, %region : vector<8xbf16>
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, SymmMem_Pointer:$address);
  let results = (outs AnyTypeOf<[BF16, F16, VectorOfRankAndType<[1], [BF16, F16]>]>:$value);
  let assemblyFormat = "$pool `,` $address attr-dict `:` type($value)";
}

defvar SignalProtocolDoc = [{
    Each rank's signal pad holds one u32 slot per (channel, rank), and as
    many u32 counters; a channel is typically a thread block, `channel` in
    `[0, 264)`. A wait gives up once the pool's timeout has passed and sets
    the pool's error flag, which the runtime reports when the call returns;
    a dead peer becomes an error, never a hang.
}];

def SymmMem_PutSignalOp : SymmMem_DeviceOp<"put_signal", [
    MemoryEffects<[MemRead<SymmMem_SignalPadResource>,
                   MemWrite<SymmMem_SignalPadResource>]>]> {
  let summary = "signals a peer through its signal pad";
  let description = SignalProtocolDoc # [{
    Sets slot `(channel, this rank)` of rank `peer`'s pad from 0 to 1
    (compare-and-swap, release semantics, system scope), waiting while it
    is still 1 from an earlier signal. Writes before it are visible to the
    peer after its matching `symm_mem.wait_signal`.

    ```mlir
    symm_mem.put_signal %pool to %peer channel %c
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$peer, Index:$channel);
  let assemblyFormat = "$pool `to` $peer `channel` $channel attr-dict";
}

def SymmMem_WaitSignalOp : SymmMem_DeviceOp<"wait_signal", [
    MemoryEffects<[MemRead<SymmMem_SignalPadResource>,
                   MemWrite<SymmMem_SignalPadResource>]>]> {
  let summary = "waits for a peer's signal on this rank's pad";
  let description = SignalProtocolDoc # [{
    Spins until slot `(channel, peer)` of this rank's pad is 1 and turns it
    back to 0 (compare-and-swap, acquire semantics, system scope). Slots
    return to 0, so a replayed CUDA graph needs no reset.

    ```mlir
    symm_mem.wait_signal %pool from %peer channel %c
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$peer, Index:$channel);
  let assemblyFormat = "$pool `from` $peer `channel` $channel attr-dict";
}

def SymmMem_BarrierOp : SymmMem_DeviceOp<"barrier", [
    MemoryEffects<[MemRead<SymmMem_SignalPadResource>,
                   MemWrite<SymmMem_SignalPadResource>]>]> {
  let summary = "a thread block's barrier with the same block of every rank";
  let description = SignalProtocolDoc # [{
    Every thread of the block reaches it. The block synchronizes, threads
    `0 .. world_size` each put a signal to one peer on `channel` and wait
    for that peer's, and the block synchronizes again: the block's writes
    before the barrier are visible to every peer's block after it. Blocks
    need at least `world_size` threads.

    ```mlir
    symm_mem.barrier %pool channel %block
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$channel);
  let assemblyFormat = "$pool `channel` $channel attr-dict";
}

def SymmMem_AddCounterOp : SymmMem_DeviceOp<"add_counter", [
    MemoryEffects<[MemWrite<SymmMem_SignalPadResource>]>]> {
  let summary = "adds 1 to a peer's counter, posted";
  let description = SignalProtocolDoc # [{
    Adds 1 to counter `(channel, this rank)` of rank `peer`'s pad with a
    posted reduction (release semantics, system scope): no round trip.
    Counters only grow (modulo 2^32) and are never reset; pair it with
    `symm_mem.wait_counter` and a call number (`symm_mem.epoch`).

    ```mlir
    symm_mem.add_counter %pool to %peer channel %c
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$peer, Index:$channel);
  let assemblyFormat = "$pool `to` $peer `channel` $channel attr-dict";
}

def SymmMem_WaitCounterOp : SymmMem_DeviceOp<"wait_counter", [
    MemoryEffects<[MemRead<SymmMem_SignalPadResource>,
                   MemWrite<SymmMem_SignalPadResource>]>]> {
  let summary = "waits until a peer's counter reaches a value";
  let description = SignalProtocolDoc # [{
    Spins with acquire loads (system scope) until counter `(channel, peer)`
    of this rank's pad is at least `target`, compared modulo 2^32. It orders
    what follows after the peer's writes (and may set the error flag), so it
    is modelled as writing the pad too: it is never dead code.

    ```mlir
    symm_mem.wait_counter %pool from %peer channel %c reaches %n
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$peer, Index:$channel,
                       I32:$target);
  let assemblyFormat = [{
    $pool `from` $peer `channel` $channel `reaches` $target attr-dict
  }];
}

def SymmMem_EpochOp : SymmMem_DeviceOp<"epoch", [
    MemoryEffects<[MemRead<SymmMem_SignalPadResource>]>]> {
  let summary = "a channel's call counter on this rank";
  let description = [{
    How many calls channel `channel` of this pool has finished on this rank
    (u32, wrapping), as last set by `symm_mem.set_epoch`. Every rank calls
    the same kernels in the same order, so the counter agrees across ranks.
    Channels `[0, 264)` count the staged kernels' calls (which their
    counters pair with); `[264, 528)` the Lamport one-shot's, apart.

    ```mlir
    %n = symm_mem.epoch %pool channel %block
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$channel);
  let results = (outs I32:$epoch);
  let assemblyFormat = "$pool `channel` $channel attr-dict";
}

def SymmMem_SetEpochOp : SymmMem_DeviceOp<"set_epoch", [
    MemoryEffects<[MemWrite<SymmMem_SignalPadResource>]>]> {
  let summary = "sets a channel's call counter on this rank";
  let description = [{
    ```mlir
    symm_mem.set_epoch %pool channel %block to %next
    ```
  }];
  let arguments = (ins SymmMem_PoolType:$pool, Index:$channel, I32:$epoch);
  let assemblyFormat = "$pool `channel` $channel `to` $epoch attr-dict";
}

#endif // SYMM_DIALECT_SYMMMEM_OPS

//===----------------------------------------------------------------------===//
// Measured kernel choice (host): a compiler-generated kernel or the library
//===----------------------------------------------------------------------===//

def SymmMem_KernelRoundsOp : SymmMem_Op<"kernel_rounds", []> {
  let summary = "how many times to run a measured choice between two kernels";
  let description = [{
    A site where the compiler generated its own kernel for work that a
    library (cuBLAS) can also do: the work runs in an `scf.for` of
    `kernel_rounds` iterations, each taking one way by `kernel_variant`.
    The runtime answers 1 once the way for this row count is known (or
    forced by `SYMM_MATMUL`, or the call is being captured), and more on
    the first call of a row count outside a capture, when it times both
    ways by turns and keeps the faster. Rows above `max_rows` always take
    the library. The work must overwrite its outputs from its inputs, so
    that running it again changes nothing. `after_gemv(S)`: the site's input
    is the output of site `S`, whose generated GEMV, where `S` takes it for
    this row count, runs just before it, so that this site's own GEMV starts
    while that one drains, a gain its timing alone cannot show (the runtime
    credits it then, and only then).

    ```mlir
    %rounds = symm_mem.kernel_rounds site(3) rows(%m) max_rows(16) after_gemv(2)
    scf.for %i = %c0 to %rounds step %c1 {
      %generated = symm_mem.kernel_variant site(3) rows(%m) round(%i) max_rows(16)
      scf.if %generated { gpu.launch_func ... } else { linalg.matmul ... }
      symm_mem.kernel_variant_end site(3) rows(%m) round(%i)
    }
    ```
  }];
  let arguments = (ins I64Attr:$site, Index:$rows, I64Attr:$max_rows,
                       OptionalAttr<I64Attr>:$after_gemv);
  let results = (outs Index:$rounds);
  let assemblyFormat = "`site` `(` $site `)` `rows` `(` $rows `)` `max_rows` `(` $max_rows `)` (`after_gemv` `(` $after_gemv^ `)`)? attr-dict";
}

def SymmMem_KernelVariantOp : SymmMem_Op<"kernel_variant", []> {
  let summary = "whether a round of a measured choice runs the generated kernel";
  let description = [{
    True where round `round` of site `site` runs the compiler's kernel,
    false where it runs the library's (see `kernel_rounds`). While the site
    is being measured it also starts the round's timing.
  }];
  let arguments = (ins I64Attr:$site, Index:$rows, Index:$round, I64Attr:$max_rows);
  let results = (outs I1:$generated);
  let assemblyFormat = "`site` `(` $site `)` `rows` `(` $rows `)` `round` `(` $round `)` `max_rows` `(` $max_rows `)` attr-dict";
}

def SymmMem_KernelVariantEndOp : SymmMem_Op<"kernel_variant_end", []> {
  let summary = "the end of a round of a measured choice";
  let description = [{
    Ends the round's timing while the site is being measured; after the
    last round the runtime compares the two ways and keeps the faster.
  }];
  let arguments = (ins I64Attr:$site, Index:$rows, Index:$round);
  let assemblyFormat = "`site` `(` $site `)` `rows` `(` $rows `)` `round` `(` $round `)` attr-dict";
}

def SymmMem_TensorMapOp : SymmMem_Op<"tensor_map", []> {
  let summary = "the device address of a TMA descriptor of a row-major bf16 matrix";
  let description = [{
    The runtime's descriptor (`CUtensorMap`, in device memory) of `source`,
    a bf16 matrix whose rows are contiguous (a 3-D memref is a stack of
    matrices read as one of all their rows, where its strides make it one;
    otherwise the runtime is given no rows and answers 0), for boxes of `box_rows` x
    `box_columns` elements with the 128-byte swizzle: what a generated
    kernel's `cp.async.bulk.tensor` reads the matrix through. The runtime
    makes one per (address, sizes, box) on first sight outside a stream
    capture and keeps it; 0 where it has none (first seen while capturing,
    or the driver refused it), and the caller then takes another way.

    ```mlir
    %descriptor = symm_mem.tensor_map %w box(64 x 64) : memref<4096x7168xbf16>
    ```
  }];
  let arguments = (ins MemRefRankOf<[BF16], [2, 3]>:$source, I64Attr:$box_rows,
                       I64Attr:$box_columns);
  let results = (outs I64:$descriptor);
  let assemblyFormat = "$source `box` `(` $box_rows `x` $box_columns `)` attr-dict `:` type($source)";
  let hasVerifier = 1;
}
