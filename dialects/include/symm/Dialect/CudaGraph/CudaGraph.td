//===- CudaGraph.td - cudagraph dialect ---------------------*- tablegen -*-===//
//
// CUDA-graph partitions: functions whose work is captured into a CUDA graph
// on first launch and replayed after, and the launches that run them.
//
//===----------------------------------------------------------------------===//

#ifndef SYMM_DIALECT_CUDAGRAPH
#define SYMM_DIALECT_CUDAGRAPH

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"

def CudaGraph_Dialect : Dialect {
  let name = "cudagraph";
  let cppNamespace = "::symm::cudagraph";
  let summary = "CUDA-graph partitions of a host function";
  let description = [{
    `cudagraph-partition` splits a function into partitions, functions
    marked `cudagraph.partition = N`, holding the work a CUDA graph can
    capture, and fallback regions that stay in the function. The function
    runs each partition with `cudagraph.launch`, which captures it into a
    graph on the first call and replays the graph after, so every buffer
    the partition allocates keeps its address across calls.

    Discardable attributes on `func.func`:

    - `cudagraph.partition = N : i64`: the function is partition N of its
      caller. Its arguments and results are the partition's signature
      (Inductor's GraphPartitionSignature): every value it reads and every
      value it produces for later use.
    - `cudagraph.hoisted = array<i64: ...>`: indices of results that are
      allocations hoisted out of the following fallback region.
    - `cudagraph.capturable`: on a declaration, the callee can be captured;
      on a definition, the whole function is capturable and needs no
      partitions.
    - `cudagraph.p2p` on a partition argument: a symmetric buffer, whose
      address is already stable; the runtime must not copy it into the
      graph's managed pool (seed 001 [3/5]).

    Memory in `#cudagraph.host` memory space is host memory: copies between
    it and device memory cannot be captured.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    static constexpr ::llvm::StringLiteral kPartitionAttrName =
        "cudagraph.partition";
    static constexpr ::llvm::StringLiteral kHoistedAttrName =
        "cudagraph.hoisted";
    static constexpr ::llvm::StringLiteral kCapturableAttrName =
        "cudagraph.capturable";
  private:
    void registerAttributes();
  public:
  }];
}

def CudaGraph_HostMemoryAttr : AttrDef<CudaGraph_Dialect, "HostMemory"> {
  let mnemonic = "host";
  let summary = "memory space of host (CPU) buffers";
  let description = [{
    ```mlir
    %staging = memref.alloc() : memref<1024xf32, #cudagraph.host>
    ```
  }];
}

def CudaGraph_LaunchOp : Op<CudaGraph_Dialect, "launch", [
    CallOpInterface, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs a partition as a CUDA graph";
  let description = [{
    Runs partition `@callee`: captured into a CUDA graph on the first
    launch, replayed on every later one. Operands and results follow the
    partition's function type.

    ```mlir
    %out = cudagraph.launch @f_partition_0(%x, %w)
        : (memref<8x64xbf16>, memref<64x64xbf16>) -> memref<8x64xbf16>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$inputs,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let results = (outs Variadic<AnyType>:$outputs);
  let assemblyFormat = [{
    $callee `(` $inputs `)` attr-dict `:` functional-type($inputs, $outputs)
  }];
  let extraClassDeclaration = [{
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return getCalleeAttr();
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      setCalleeAttr(::llvm::cast<::mlir::FlatSymbolRefAttr>(
          ::llvm::cast<::mlir::SymbolRefAttr>(callee)));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getInputs(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() {
      return getInputsMutable();
    }
  }];
}

#endif // SYMM_DIALECT_CUDAGRAPH
